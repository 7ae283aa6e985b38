// What the spinner lines say while work runs, pure: the time is passed in.

/** 4_200 → "4s", 75_000 → "1m 15s", 3_720_000 → "1h 02m". */
export function elapsedText(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1000));
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m ${String(s % 60).padStart(2, '0')}s`;
  return `${Math.floor(m / 60)}h ${String(m % 60).padStart(2, '0')}m`;
}

export interface BusyLabel {
  /** Text is streaming (else the model thinks, or has not begun). */
  writing: boolean;
  /** When the completion began (epoch ms). */
  since?: number;
  /** The API has sent nothing since then (epoch ms). */
  silentSince?: number;
  /** Now (epoch ms); without it, no times are said. */
  now?: number;
}

/**
 * "Thinking… 12s (Esc to stop)", and " · no data for 8s" while the API sends nothing: a stalled
 * stream is told from a slow one. A time under a second is left out, rather than flash "0s".
 */
export function busyLabel({ writing, since, silentSince, now }: BusyLabel): string {
  let label = writing ? 'Writing…' : 'Thinking…';
  if (now !== undefined && since !== undefined && now - since >= 1000) label += ` ${elapsedText(now - since)}`;
  if (now !== undefined && silentSince !== undefined) label += ` · no data for ${elapsedText(now - silentSince)}`;
  return `${label} (Esc to stop)`;
}
