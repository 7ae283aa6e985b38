// Test support for end-to-end tests of the built CLI (subpath export `infinity-code/testing`).
export { demoBrain, DEMO_FILES } from './demo-brain.js';
export { createDemoRepo, DEMO_TASK } from './demo.js';
