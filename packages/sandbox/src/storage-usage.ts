import { runProcess } from './run-process.js';
import { inheritedEnv } from './secret-env.js';

/**
 * Bytes of disk the trees at `dirs` take: allocated blocks (a sparse file costs what it holds),
 * each hard-linked file once. du and not a walk of our own: its traversal (fts) never follows a
 * symlink nor leaves the file system it started on, however a command renames directories or
 * swaps them for symlinks during the walk, and has no depth limit (a tree 2,000 directories deep
 * hides nothing). `prefix` runs du with the rights to read every directory (see
 * NamespaceHolder.ownerArgv); where that cannot run (the holder just went), du runs as we are,
 * and counts what we may read. A missing tree counts zero.
 */
export async function diskUsage(dirs: readonly string[], prefix: readonly string[] = []): Promise<number> {
  if (dirs.length === 0) return 0;
  const counted = (await du(dirs, prefix)) ?? (prefix.length > 0 ? await du(dirs, []) : undefined);
  if (counted === undefined) throw new Error("du could not measure the sandbox's storage");
  return counted;
}

/** The total du reports for `dirs`, or undefined when it reported none of them. */
async function du(dirs: readonly string[], prefix: readonly string[]): Promise<number | undefined> {
  const argv = [...prefix, 'du', '-s', '-k', '-x', '--', ...dirs];
  const r = await runProcess(argv[0], argv.slice(1), { env: inheritedEnv() });
  // du exits 1 when a tree is missing or a directory unreadable, having counted everything else.
  const kb = r.stdout
    .toString()
    .split('\n')
    .map((line) => /^(\d+)\t/.exec(line)?.[1])
    .filter((n): n is string => n !== undefined);
  if (kb.length === 0) return r.exitCode === 1 && /No such file or directory/.test(r.stderr.toString()) ? 0 : undefined;
  return kb.reduce((sum, n) => sum + Number(n) * 1024, 0);
}
