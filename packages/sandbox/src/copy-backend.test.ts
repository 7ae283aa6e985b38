import { makeCopyBackend } from './copy-backend.js';
import { registerBackendSuite, registerContainmentSuite } from './test-support/backend-suite.js';

registerBackendSuite('copy');

// Where the kernel allows no pid namespace (no user namespaces, macOS), commands are tagged with
// an environment marker instead and whatever carries it is killed when they end. Commands then
// see every process of the user, so only their own environment is clean of credentials.
registerContainmentSuite('sandbox backend copy (env-marker fallback)', makeCopyBackend({ containment: 'env-marker' }), {
  commandsSeeHostProcesses: true,
});
