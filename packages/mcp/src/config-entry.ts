// `@infinity-code/mcp/config`: reading and checking server definitions and trust, without loading
// the SDK (the CLI reads its config before anything starts).
export * from './config.js';
export * from './trust.js';
