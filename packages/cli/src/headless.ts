import { resultText, type RuntimeEvent } from '@infinity-code/runtime';

export interface HeadlessWriters {
  out(text: string): void;
  err(text: string): void;
}

export interface HeadlessState {
  errors: Array<{ kind: string; message: string }>;
  completions: number;
}

/**
 * Renders the runtime's event stream without a TUI: the assistant's text to stdout, progress
 * (tool calls, results, retries, errors) to stderr. Pure rendering; no decisions.
 */
export function headlessPrinter(w: HeadlessWriters): { observe(e: RuntimeEvent): void; state: HeadlessState } {
  const state: HeadlessState = { errors: [], completions: 0 };
  let midLine = false;
  const endLine = () => {
    if (midLine) w.out('\n');
    midLine = false;
  };
  return {
    state,
    observe(e) {
      switch (e.type) {
        case 'text-delta':
          w.out(e.text);
          midLine = !e.text.endsWith('\n');
          break;
        case 'tool-call':
          endLine();
          w.err(`● ${e.display ?? `${e.call.name} ${JSON.stringify(e.call.input)}`}\n`);
          break;
        case 'tool-result': {
          const first = resultText(e.content).split('\n')[0] ?? '';
          w.err(`  ${e.isError ? '✗' : '⎿'} ${first.length > 120 ? `${first.slice(0, 117)}...` : first}\n`);
          break;
        }
        case 'completion-retry':
          endLine();
          w.err(`  … ${e.message} Retrying in ${(e.delayMs / 1000).toFixed(1)}s (attempt ${e.attempt}).\n`);
          break;
        case 'error':
          endLine();
          state.errors.push({ kind: e.kind, message: e.message });
          w.err(`Error: ${e.message}\n`);
          break;
        case 'slice-finished':
          state.completions += e.completions;
          endLine();
          break;
        default:
          break;
      }
    },
  };
}
