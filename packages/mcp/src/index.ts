// Public face of @infinity-code/mcp: the session's MCP servers (official SDK) as runtime tools.
export {
  describeServer,
  expandVars,
  fingerprint,
  McpConfigError,
  parseMcpServers,
  problemText,
  readMcpFile,
  SERVER_NAME,
  type McpServerConfig,
  type McpServerEntry,
  type McpSourceKind,
  type ParsedServers,
} from './config.js';
export { isProjectSource, trustOf, type McpTrust, type McpTrustDecision } from './trust.js';
export {
  DEFAULT_MCP_OUTPUT_LIMITS,
  DEFAULT_MCP_START_TIMEOUT_MS,
  DEFAULT_MCP_TOOL_TIMEOUT_MS,
  startMcpServers,
  type McpServers,
  type StartMcpOptions,
} from './manager.js';
export { MAX_RESTARTS, type McpServerState, type McpServerStatus } from './server.js';
export { modelToolName, MAX_TOOL_NAME } from './names.js';
export { toOutput } from './tool-adapter.js';
