import { registerBackendSuite } from './test-support/backend-suite.js';

registerBackendSuite('copy');
