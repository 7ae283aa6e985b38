import { UNRECORDED_MODEL, type ThreadUsage } from '@infinity-code/runtime';
import { addUsage, ZERO_USAGE, type Usage } from '@infinity-code/runtime/messages';
import type { Pricing } from '../pricing.js';
import { formatUsd, shortId } from './format.js';

const tokens = (n: number) => n.toLocaleString('en-US');

/**
 * `/cost`: a table of the stored usage, one row per thread and model, each priced with its own
 * model, and the session's total. Text, for the transcript. Imports the runtime's main module:
 * load it on use, not with the first frame.
 */
export function costReport(rows: readonly ThreadUsage[], pricing: Pricing, sessionId: string): string {
  if (rows.length === 0) return `No model calls yet in session ${shortId(sessionId)}.`;
  let total: Usage = ZERO_USAGE;
  let totalUsd = 0;
  let completions = 0;
  const unpriced = new Set<string>();
  const table: string[][] = [['thread', 'kind', 'model', 'calls', 'input', 'cache write', 'cache read', 'output', 'USD']];
  for (const r of rows) {
    // The store sums a thread's completions per model: with totals only, a tiered price (Haiku
    // 5.5's short prompts) is chosen by the average prompt (see Pricing.costOfTotals).
    const usd = pricing.costOfTotals(r.model, r.usage, r.completions);
    if (usd === undefined) unpriced.add(r.model);
    else totalUsd += usd;
    total = addUsage(total, r.usage);
    completions += r.completions;
    table.push([shortId(r.threadId), r.kind, r.model, ...figures(r.completions, r.usage), formatUsd(usd)]);
  }
  const partial = unpriced.size > 0;
  table.push(['total', '', '', ...figures(completions, total), `${partial ? '≥' : ''}${formatUsd(totalUsd)}`]);
  const lines = [`Usage of session ${shortId(sessionId)} (USD estimated at list prices):`, ...align(table)];
  if (unpriced.delete(UNRECORDED_MODEL)) {
    lines.push(`${UNRECORDED_MODEL}: usage stored before models were recorded per call; the total leaves it out.`);
  }
  if (unpriced.size > 0) {
    lines.push(
      `No price for ${[...unpriced].join(', ')}: the total leaves it out. Set one with "prices" in your config, ` +
        'e.g. {"prices": {"<model>": {"input": 3, "output": 15}}} (USD per million tokens).',
    );
  }
  return lines.join('\n');
}

function figures(completions: number, u: Usage): string[] {
  return [completions, u.input_tokens, u.cache_creation_input_tokens, u.cache_read_input_tokens, u.output_tokens].map(tokens);
}

/** Text columns left-aligned, figures (from `calls` on) right-aligned. */
function align(table: string[][]): string[] {
  const widths = table[0].map((_, i) => Math.max(...table.map((row) => row[i].length)));
  return table.map((row) =>
    row
      .map((cell, i) => (i >= 3 ? cell.padStart(widths[i]) : cell.padEnd(widths[i])))
      .join('  ')
      .trimEnd(),
  );
}
