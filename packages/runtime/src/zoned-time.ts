import { ToolInputError } from './errors.js';

/** The instant of a wall-clock date and time in an IANA time zone (DST-aware). */
export function zonedInstant(date: string, time: string, timeZone: string): number {
  const d = /^(\d{4})-(\d{2})-(\d{2})$/.exec(date);
  const t = /^(\d{2}):(\d{2})(?::(\d{2}))?$/.exec(time);
  if (!d) throw new ToolInputError(`date must look like 2026-12-31, got '${date}'`);
  if (!t) throw new ToolInputError(`time must look like 14:30 or 14:30:00, got '${time}'`);
  const [y, mo, da] = [Number(d[1]), Number(d[2]), Number(d[3])];
  const [h, mi, s] = [Number(t[1]), Number(t[2]), Number(t[3] ?? 0)];
  const naive = Date.UTC(y, mo - 1, da, h, mi, s);
  const check = new Date(naive);
  if (check.getUTCMonth() !== mo - 1 || check.getUTCDate() !== da || h > 23 || mi > 59 || s > 59) {
    throw new ToolInputError(`${date} ${time} is not a valid date and time`);
  }
  try {
    new Intl.DateTimeFormat('en-US', { timeZone });
  } catch {
    throw new ToolInputError(`unknown time zone '${timeZone}' (use an IANA name such as Europe/Paris)`);
  }
  // The zone's offset depends on the instant; two rounds settle it except inside a DST gap.
  let instant = naive - offset(naive, timeZone);
  instant = naive - offset(instant, timeZone);
  return instant;
}

function offset(instant: number, timeZone: string): number {
  const parts = new Intl.DateTimeFormat('en-US', {
    timeZone,
    hourCycle: 'h23',
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    second: '2-digit',
  }).formatToParts(new Date(instant));
  const get = (type: string) => Number(parts.find((p) => p.type === type)?.value);
  const local = Date.UTC(get('year'), get('month') - 1, get('day'), get('hour'), get('minute'), get('second'));
  return local - Math.floor(instant / 1000) * 1000;
}

export function localTimeZone(): string {
  return Intl.DateTimeFormat().resolvedOptions().timeZone;
}
