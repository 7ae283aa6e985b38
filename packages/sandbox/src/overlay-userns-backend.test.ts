import { describe, expect, it } from 'vitest';
import { registerBackendSuite } from './test-support/backend-suite.js';
import { unavailableReason } from './test-support/availability.js';
import { runSuiteAsUnprivilegedUser } from './test-support/unprivileged.js';

const uid = process.getuid?.();
if (uid === 0) {
  // As root, commands in a user namespace would still be the host's root: the backend refuses.
  it("is refused as root: its commands would be the host's root", async () => {
    expect(await unavailableReason('overlay-userns')).toMatch(/as root, commands in a user namespace would still be the host's root/);
  });
} else {
  // Where the backend can't run here, the suite shows as skipped with the reason, rather than a
  // placeholder that passes.
  const reason = await unavailableReason('overlay-userns');
  describe.skipIf(reason !== undefined)(`overlay-userns backend${reason === undefined ? '' : ` (not run as uid ${uid}: ${reason})`}`, () => {
    registerBackendSuite('overlay-userns');
  });
}

// The backend exists for users who are not root, so as root (CI) the same suite also runs, in a
// child vitest, as a freshly created unprivileged user.
if (process.getuid?.() === 0 && process.env.IC_SANDBOX_INNER_RUN !== '1') {
  it('passes the same suite as an unprivileged user', { timeout: 600_000 }, async () => {
    const outcome = await runSuiteAsUnprivilegedUser('src/overlay-userns-backend.test.ts');
    // As root the unprivileged user can always be made; not running is a failure, not a skip.
    expect(outcome.skipped, 'the suite did not run as an unprivileged user').toBeUndefined();
    expect(outcome.output).toMatch(/Tests\s+\d+ passed/);
    expect(outcome.output).not.toMatch(/skipped/);
    expect(outcome.exitCode, outcome.output).toBe(0);
  });
}
