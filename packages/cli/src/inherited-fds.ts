// Descriptors the CLI's parent left open for it reach no command (see inherited-fds.ts of the
// sandbox package): closed before anything starts. Kept open: those the command line names
// (`--mcp-config <(…)` hands over /dev/fd/63, read later), and V8's own logs; children still get
// /dev/null in the place of those.
import { closeInheritedDescriptors } from '@infinity-code/sandbox/inherited-fds';

/** Descriptor numbers the arguments name as /dev/fd/N or /proc/self/fd/N. */
export function namedDescriptors(argv: readonly string[]): number[] {
  return argv.flatMap((a) => [...a.matchAll(/\/(?:dev|proc\/self)\/fd\/(\d+)/g)].map((m) => Number(m[1])));
}

/**
 * V8 opens the files of its logging and profiling flags (--prof, --perf-basic-prof...) without
 * close-on-exec, like an inherited descriptor: with one of those, nothing is closed.
 */
function v8Logging(execArgv: readonly string[], nodeOptions: string | undefined): boolean {
  return [...execArgv, ...(nodeOptions ?? '').split(/\s+/)].some((a) => /^--(prof|log|perf-|ll-prof)/.test(a));
}

export function closeInheritedFds(argv: readonly string[], execArgv: readonly string[], nodeOptions: string | undefined): void {
  if (!v8Logging(execArgv, nodeOptions)) closeInheritedDescriptors(namedDescriptors(argv));
}
