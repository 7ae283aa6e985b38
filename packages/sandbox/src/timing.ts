import { channel } from 'node:diagnostics_channel';

/**
 * Where a run's time goes, published on the diagnostics channel `infinity-code:timing` (the CLI
 * prints it under INFINITY_CODE_TRACE) and only while something listens: otherwise a check of
 * one flag. Each message is `{ what, ms?, detail? }`; `ms` is how long the step took.
 */
const timing = channel('infinity-code:timing');

/** Publishes that `what` took from `startedAt` (a performance.now()) until now. */
export function timed(what: string, startedAt: number, detail?: () => string): void {
  if (timing.hasSubscribers) timing.publish({ what, ms: performance.now() - startedAt, ...(detail ? { detail: detail() } : {}) });
}
