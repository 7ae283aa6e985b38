import type { Tool } from '@infinity-code/runtime';
import { CallOrder, type CallOrderView } from './call-order.js';
import { createFileTool } from './create-file.js';
import { editFileTool } from './edit-file.js';
import { executeCommandTool, type ExecuteCommandTool } from './execute-command.js';
import { grepTool } from './grep.js';
import { listFilesTool } from './list-files.js';
import type { CodingToolsOptions } from './options.js';
import { readFileTool } from './read-file.js';
import type { ToolEnv } from './tool-kit.js';

export interface CodingTools {
  /** The six tools, to pass to the runtime (`tools` of LocalSystem or StepSystem). */
  tools: Tool[];
  /** The execute_command tool, for UIs that show running commands. */
  executeCommand: ExecuteCommandTool;
  /** The order the tools give each thread's calls; holds nothing for an idle thread. */
  order: CallOrderView;
}

/**
 * The agent's coding tools (docs/architecture.md, *CLI contracts*): read_file, create_file, edit_file, list_files, grep and
 * execute_command, each acting in the calling thread's sandbox as `sandboxFor` resolves it.
 */
export function createCodingTools(opts: CodingToolsOptions): Tool[] {
  return codingTools(opts).tools;
}

/** createCodingTools, also handing back the execute_command tool with its running-command view. */
export function codingTools(opts: CodingToolsOptions): CodingTools {
  // One order for all six: a command must wait for the edits asked before it.
  const order = new CallOrder();
  const env: ToolEnv = { sandboxFor: opts.sandboxFor, repoRoot: opts.repoRoot, order };
  const executeCommand = executeCommandTool(opts, order);
  return {
    tools: [readFileTool(env), createFileTool(env), editFileTool(env), listFilesTool(env), grepTool(env), executeCommand],
    executeCommand,
    order,
  };
}

export const CODING_TOOL_NAMES = ['read_file', 'create_file', 'edit_file', 'list_files', 'grep', 'execute_command'] as const;
