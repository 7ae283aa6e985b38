import { describe } from 'vitest';
import { registerBackendSuite } from './test-support/backend-suite.js';
import { unavailableReason } from './test-support/availability.js';

// Where the backend can't run (not root, not Linux) the suite shows as skipped with the reason,
// rather than a placeholder that passes; CI runs as root, so there it always runs.
const reason = await unavailableReason('overlay-root');
describe.skipIf(reason !== undefined)(`overlay-root backend${reason === undefined ? '' : ` (not run here: ${reason})`}`, () => {
  registerBackendSuite('overlay-root');
});
