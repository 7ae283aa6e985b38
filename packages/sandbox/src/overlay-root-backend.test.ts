import { expect, it } from 'vitest';
import { registerBackendSuite } from './test-support/backend-suite.js';
import { unavailableReason } from './test-support/availability.js';

const reason = await unavailableReason('overlay-root');
if (reason === undefined) {
  registerBackendSuite('overlay-root');
} else {
  // Only possible when not running as root (a developer machine); CI runs as root.
  console.log(`[sandbox] overlay-root suite NOT run on this machine: ${reason}`);
  it('overlay-root reports why it is unavailable', () => {
    expect(reason).toMatch(/root|Linux|mount/);
  });
}
