const UNIT_MS = { s: 1_000, m: 60_000, h: 3_600_000 } as const;

/** `90s`, `5m`, `1.5h` or plain seconds (`120`) in ms; undefined when it is none of those or not above 0. */
export function parseDuration(text: string): number | undefined {
  const m = /^(\d+(?:\.\d+)?)\s*([smh]?)$/i.exec(text.trim());
  if (!m) return undefined;
  const ms = Math.round(Number(m[1]) * UNIT_MS[(m[2].toLowerCase() || 's') as keyof typeof UNIT_MS]);
  return ms > 0 ? ms : undefined;
}

/** A duration as the user would write it: `90s`, `5m`, `1h` (whole units when they fit). */
export function formatDuration(ms: number): string {
  if (ms % UNIT_MS.h === 0) return `${ms / UNIT_MS.h}h`;
  if (ms % UNIT_MS.m === 0) return `${ms / UNIT_MS.m}m`;
  return `${Math.round(ms / 100) / 10}s`;
}
