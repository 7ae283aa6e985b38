// What transcript items show, from the runtime's typed data: shared by live events
// (state-runtime.ts) and a resumed session's stored history (history-items.ts), so both give the
// same rows. Nothing here reads the text the model reads, other than as a last resort to show it.
import type { InjectedReport, ResultContent, ToolDisplay } from '@infinity-code/runtime';
import { resultText } from '@infinity-code/runtime/messages';
import { summarize, tail, truncate } from './format.js';

/** Lines of subscription output an event item keeps when its tool gave none to show. */
const EVENT_LINES = 5;

/** Longer than any terminal line: the screen cuts labels, this only bounds them. */
const LABEL_MAX = 400;

/**
 * A child's label: the first line of the task its parent gave it. Cut only where no terminal is
 * that wide: rows cut it at the terminal's edge, titles wrap.
 */
export function taskLabel(task: string | undefined): string | undefined {
  const line = task?.split('\n')[0]?.trim();
  return line ? truncate(line, LABEL_MAX) : undefined;
}

/** A finished call's row: what its tool gave UIs, or the first line of its content (a tool server's tools give nothing). */
export function finishedCall(
  display: ToolDisplay | undefined,
  content: readonly ResultContent[],
): { summary: string; title?: string; diff?: string; output?: string[] } {
  return {
    summary: display?.summary ?? summarize(resultText(content)),
    ...(display?.title ? { title: display.title } : {}),
    ...(display?.diff ? { diff: display.diff } : {}),
    ...(display?.output?.length ? { output: display.output } : {}),
  };
}

/** A report in the child's words, then the reviewer's note; the model's text only if the runtime had no reading of it. */
export function reportText(report: InjectedReport | undefined, content: readonly ResultContent[]): string {
  if (!report) return resultText(content);
  return [report.text, report.note ?? ''].filter((t) => t.trim() !== '').join('\n\n');
}

/** Subscription output: what its tool gave UIs to show, or the last lines of the event. */
export function eventLines(display: ToolDisplay | undefined, content: readonly ResultContent[]): { lines: string[]; summary?: string } {
  const lines = display?.output ?? tail(resultText(content), EVENT_LINES);
  return display?.summary ? { lines, summary: display.summary } : { lines };
}
