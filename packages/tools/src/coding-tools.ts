import type { Tool } from '@infinity-code/runtime';
import { CallOrder, type CallOrderView } from './call-order.js';
import { createFileTool } from './create-file.js';
import { editFileTool } from './edit-file.js';
import { executeCommandTool, type ExecuteCommandTool } from './execute-command.js';
import { grepTool } from './grep.js';
import { listFilesTool } from './list-files.js';
import { NestedInstructions, type NestedInstructionsOptions } from './nested-instructions.js';
import type { CodingToolsOptions } from './options.js';
import { readFileTool } from './read-file.js';
import type { ToolEnv } from './tool-kit.js';

/**
 * CodingToolsOptions, and the instructions of subdirectories (kept here rather than in options.ts
 * while that file is being reworked; they belong with the others).
 */
export interface CodingToolsSetup extends CodingToolsOptions {
  /**
   * Shows each thread the instruction files of the directories its file tool calls reach
   * (AGENTS.md or CLAUDE.md, and CLAUDE.local.md, below the root: the root's are the system
   * prompt's), appended to the result of its first call under each (see NestedInstructions).
   * Off when absent or false.
   */
  nestedInstructions?: boolean | NestedInstructionsOptions;
  /**
   * Absolute directories outside the repository that read_file, grep and list_files may read by
   * absolute path (--add-dir), through the sandbox's confined view; never written.
   */
  readDirs?: readonly string[];
}

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
export function createCodingTools(opts: CodingToolsSetup): Tool[] {
  return codingTools(opts).tools;
}

/** createCodingTools, also handing back the execute_command tool with its running-command view. */
export function codingTools(opts: CodingToolsSetup): CodingTools {
  // One order for all six: a command must wait for the edits asked before it.
  const order = new CallOrder();
  const nested = opts.nestedInstructions;
  const env: ToolEnv = {
    sandboxFor: opts.sandboxFor,
    repoRoot: opts.repoRoot,
    order,
    ...(opts.readDirs && opts.readDirs.length > 0 ? { readDirs: opts.readDirs } : {}),
    ...(nested ? { instructions: new NestedInstructions(opts.repoRoot, nested === true ? {} : nested) } : {}),
  };
  const executeCommand = executeCommandTool(opts, order);
  return {
    tools: [readFileTool(env), createFileTool(env), editFileTool(env), listFilesTool(env), grepTool(env), executeCommand],
    executeCommand,
    order,
  };
}

export const CODING_TOOL_NAMES = ['read_file', 'create_file', 'edit_file', 'list_files', 'grep', 'execute_command'] as const;
