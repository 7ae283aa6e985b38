// Public face of @infinity-code/tools: the agent's coding tools over a thread's sandbox.
export { createCodingTools, codingTools, CODING_TOOL_NAMES, type CodingTools, type CodingToolsSetup } from './coding-tools.js';
export { NestedInstructions, type NestedInstructionsOptions } from './nested-instructions.js';
export { INSTRUCTION_LIMITS, type InstructionFile } from './instruction-files.js';
export {
  ALWAYS_SECRET_ENV,
  DEFAULT_OUTPUT_LIMITS,
  DEFAULT_TIMEOUTS,
  type CodingToolsOptions,
  type CommandTimeouts,
  type OutputLimits,
} from './options.js';
export { CallOrder, ORDER_NOTE, type CallAccess, type CallOrderView, type CallTurn } from './call-order.js';
export { CANCELLED_BEFORE_START } from './tool-kit.js';
export { executeCommandTool, RESTARTED_MESSAGE, type ExecuteCommandTool, type RunningCommandInfo } from './execute-command.js';
export { NETWORK_RERUN, looksOffline, type CommandPhase, type CommandWait } from './command-run.js';
export { commandShell, type CommandShell } from './command-shell.js';
export { DECLINED_UNCONTAINED, REFUSED_UNCONTAINED, type CommandRequest, type UncontainedPolicy } from './command-gate.js';
export { PathEscapeError, ToolError } from './errors.js';
export { READ_LIMITS } from './read-file.js';
export { storedResultDisplay } from './result-display.js';
export { GREP_LIMITS } from './grep-results.js';
export { LIST_LIMIT } from './list-files.js';
export { stripAnsi } from './ansi.js';
export { clipOutput } from './output-buffer.js';
