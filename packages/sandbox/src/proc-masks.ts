// What of /proc a command may not write or read, whatever its uid. Commands run without
// capabilities, but sysctl writes are decided by uid: as uid 0 a command could set
// kernel.core_pattern to a script of its own and have the kernel run it as the host's root. So
// /proc/sys and the other kernel knobs are read-only in a command's /proc, and the files that
// leak the kernel's memory or keys are hidden, as container runtimes do.
import { existsSync, statSync } from 'node:fs';

/** Kernel settings: readable (tools read them), never written. */
const READ_ONLY = ['/proc/sys', '/proc/sysrq-trigger', '/proc/irq', '/proc/bus', '/proc/fs'];
/** Hidden: kernel memory, keyrings, timers and hardware a build has no business with. */
const MASKED = ['/proc/kcore', '/proc/keys', '/proc/timer_list', '/proc/timer_stats', '/proc/latency_stats', '/proc/sched_debug', '/proc/acpi', '/proc/scsi', '/proc/asound'];

/**
 * bubblewrap arguments to follow a fresh `--proc /proc`: each path this kernel has is bound
 * read-only or covered (a file by /dev/null, a directory by an empty read-only tmpfs). Paths the
 * kernel lacks are skipped: bubblewrap can't mount over what isn't there.
 */
export function procMaskArgs(exists: (path: string) => boolean = existsSync, isDir: (path: string) => boolean = dirAt): string[] {
  const args: string[] = [];
  for (const p of READ_ONLY) if (exists(p)) args.push('--ro-bind', p, p);
  for (const p of MASKED) {
    if (!exists(p)) continue;
    if (isDir(p)) args.push('--tmpfs', p, '--remount-ro', p);
    else args.push('--ro-bind', '/dev/null', p);
  }
  return args;
}

function dirAt(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}
