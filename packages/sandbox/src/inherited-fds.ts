// Descriptors this process inherited open across exec. Node opens every descriptor of its own with
// O_CLOEXEC, and as it starts it marks 0-15 and any run of open ones right after them the same
// way (libuv's uv_disable_stdio_inheritance), but it stops at the first gap above 15: whatever its
// parent left open past that (a directory, a socket, a pipe) stays open in every program it
// starts, since neither libuv nor nsenter, prlimit or bubblewrap close it. A directory descriptor
// leads a command past every mount of its view to the host's tree (/proc/self/fd/N/…). So no
// process of ours gets them: the CLI closes them at start-up (closeInheritedDescriptors), and
// every process this package starts has /dev/null in their place (childStdio), for a host that
// keeps its own.
import { closeSync, openSync, readdirSync, readFileSync } from 'node:fs';

/** O_CLOEXEC in the octal `flags:` of /proc/self/fdinfo/N: set when the descriptor closes on exec. */
const O_CLOEXEC = 0o2000000;

/**
 * Taken once: only native code could add to them later (Node's own descriptors close on exec),
 * and a scan costs a millisecond or more in a process with many descriptors, too much per command.
 */
let inherited: readonly number[] | undefined;

function scan(): number[] {
  let names: string[];
  try {
    names = readdirSync('/proc/self/fd');
  } catch {
    // No /proc (macOS): nothing known to keep from children.
    return [];
  }
  const found: number[] = [];
  for (const name of names) {
    const fd = Number(name);
    if (!(fd > 2)) continue;
    let info: string;
    try {
      info = readFileSync(`/proc/self/fdinfo/${name}`, 'latin1');
    } catch {
      continue; // closed since the listing (the listing's own descriptor)
    }
    const flags = /^flags:\s*([0-7]+)$/m.exec(info);
    if (flags && (parseInt(flags[1], 8) & O_CLOEXEC) === 0) found.push(fd);
  }
  return found.sort((a, b) => a - b);
}

/** Descriptors above 2 that stay open across exec: those this process inherited. */
export function inheritedDescriptors(): readonly number[] {
  return (inherited ??= scan());
}

/**
 * Closes the inherited descriptors but `keep` (ones this process still reads, say a `/dev/fd/N`
 * its command line names); returns those kept, which childStdio goes on covering. For a program's
 * start, before anything else opens descriptors: a library must not close its host's.
 */
export function closeInheritedDescriptors(keep: readonly number[] = []): readonly number[] {
  const kept = inheritedDescriptors().filter((fd) => keep.includes(fd));
  for (const fd of inheritedDescriptors()) {
    if (kept.includes(fd)) continue;
    try {
      closeSync(fd);
    } catch {
      // Already closed: nothing to keep from children.
    }
  }
  inherited = kept;
  return kept;
}

let devNull: number | undefined;

type Slot = 'pipe' | 'ignore' | 'inherit' | number;

/**
 * spawn's `stdio` for a child: `given` (stdin, stdout, stderr and any further slots the caller
 * uses), then /dev/null in the place of each inherited descriptor: libuv leaves a slot it is not
 * given as it is (open, for these), and closes only what closes on exec.
 */
export function childStdio(given: readonly Slot[]): Slot[] {
  const fds = inheritedDescriptors().filter((fd) => fd >= given.length);
  if (fds.length === 0) return [...given];
  // Kept for the process's life, closing on exec: each child gets its own copy in each slot.
  devNull ??= openSync('/dev/null', 'r+');
  const stdio: Slot[] = [...given];
  for (const fd of fds) {
    while (stdio.length < fd) stdio.push('ignore');
    stdio[fd] = devNull;
  }
  return stdio;
}
