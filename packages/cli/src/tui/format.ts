// Small text helpers shared by the reducer and the components.

/** 950 → "950", 12_345 → "12.3k", 2_500_000 → "2.5M". */
export function formatTokens(n: number): string {
  if (n < 1000) return String(n);
  if (n < 1_000_000) return `${(n / 1000).toFixed(n < 10_000 ? 1 : 0)}k`;
  return `${(n / 1_000_000).toFixed(1)}M`;
}

/** `partial`: some usage had no price, so the figure is a lower bound ("≥$0.12"). */
export function formatCost(usd: number | undefined, partial = false): string {
  if (usd === undefined) return 'cost n/a';
  if (partial) return `≥$${usd.toFixed(2)}`;
  return usd < 0.01 && usd > 0 ? '<$0.01' : `$${usd.toFixed(2)}`;
}

/** USD to the cent, or to a hundredth of a cent under a dollar (a breakdown's small shares). */
export function formatUsd(usd: number | undefined): string {
  if (usd === undefined) return 'n/a';
  return usd < 1 ? `$${usd.toFixed(4)}` : `$${usd.toFixed(2)}`;
}

export function truncate(s: string, max: number): string {
  return s.length <= max ? s : `${s.slice(0, Math.max(0, max - 1))}…`;
}

/** The first non-empty line, shortened, plus how many lines were left out. */
export function summarize(text: string, max = 100): string {
  const lines = text.split('\n').filter((l) => l.trim() !== '');
  if (lines.length === 0) return '(no output)';
  const first = truncate(lines[0].trim(), max);
  return lines.length > 1 ? `${first} (+${lines.length - 1} lines)` : first;
}

/** The last `n` non-empty lines (a live tail of command output). */
export function tail(text: string, n: number): string[] {
  const lines = text.split('\n').filter((l) => l.trim() !== '');
  return lines.slice(-n);
}

export function shortId(id: string): string {
  return id.length > 8 ? id.slice(0, 8) : id;
}

/** 800 → "0.8s", 12_000 → "12s". */
export function formatDelay(ms: number): string {
  return ms < 10_000 ? `${(ms / 1000).toFixed(1)}s` : `${Math.round(ms / 1000)}s`;
}
