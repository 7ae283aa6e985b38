import type { ResultContent, ToolDisplay } from '@infinity-code/runtime';
import { readResultDisplay } from './read-file.js';

/** Tools whose stored results say more than their first line, by name: how to read them back. */
const READERS: Readonly<Record<string, (content: readonly ResultContent[]) => ToolDisplay | undefined>> = {
  read_file: readResultDisplay,
};

/**
 * What a finished call of these tools showed UIs, read back from its stored result: a resumed
 * session's transcript has no live events, and their results are written for the model.
 * Undefined for an error, another tool's call, or a result a tool did not write this way.
 */
export function storedResultDisplay(call: { name: string }, result: { content: readonly ResultContent[]; isError: boolean }): ToolDisplay | undefined {
  if (result.isError) return undefined;
  return READERS[call.name]?.(result.content);
}
