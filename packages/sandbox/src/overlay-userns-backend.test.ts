import { expect, it } from 'vitest';
import { registerBackendSuite } from './test-support/backend-suite.js';
import { unavailableReason } from './test-support/availability.js';
import { runSuiteAsUnprivilegedUser } from './test-support/unprivileged.js';

const reason = await unavailableReason('overlay-userns');
if (reason === undefined) {
  registerBackendSuite('overlay-userns');
} else {
  console.log(`[sandbox] overlay-userns suite NOT run as uid ${process.getuid?.()}: ${reason}`);
  it('overlay-userns reports why it is unavailable', () => {
    expect(reason).toMatch(/namespace|mount|Linux|installed/);
  });
}

// The backend exists for users who are not root, so as root (CI) the same suite also runs, in a
// child vitest, as a freshly created unprivileged user.
if (process.getuid?.() === 0 && process.env.IC_SANDBOX_INNER_RUN !== '1') {
  it('passes the same suite as an unprivileged user', { timeout: 300_000 }, async () => {
    const outcome = await runSuiteAsUnprivilegedUser('src/overlay-userns-backend.test.ts');
    if (outcome.skipped) {
      console.log(`[sandbox] overlay-userns as an unprivileged user NOT run: ${outcome.skipped}`);
      return;
    }
    expect(outcome.output).toMatch(/Tests\s+\d+ passed/);
    expect(outcome.output).not.toMatch(/NOT run/);
    expect(outcome.exitCode, outcome.output).toBe(0);
  });
}
