import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { SandboxError } from './errors.js';
import { makeGitRunner, type GitRunner } from './git.js';
import { killQuietly, processStart } from './proc.js';
import { inheritedEnv } from './secret-env.js';

export type OverlayMode = 'userns' | 'root';

/** What one sandbox mounts: paths relative to the session dir keep overlay's option string short. */
export interface MountPlan {
  sessionDir: string;
  /** Sandbox dir relative to the session dir. */
  sandboxRel: string;
  repoRoot: string;
  /** Colon-joined lower layers for the merged view, top first, relative to the session dir. */
  lowers: string;
  /** Lower layers as they were at spawn: the read-only "lower view" the diff compares against. */
  spawnLowers: string;
  /**
   * Lower layers of the session's current snapshot (delta over base), mounted read-only at
   * SNAPSHOT_VIEW_DIR for diffs since the snapshot; undefined when the base alone is that view.
   */
  snapshotLowers: string | undefined;
  /** Ignored heavy directories (node_modules) that get private overlays over the user's copy. */
  heavyDirs: readonly string[];
  /** The user's object directory (`<common dir>/objects`), as the host sees it. */
  realObjects: string;
}

/**
 * Where, inside the namespace, the user's real object directory stays reachable (read-only):
 * there `<repo>/.git/objects` is the sandbox's private .git overlay, which holds whatever
 * commands committed. Relative to the sandbox dir.
 */
export const REAL_OBJECTS_DIR = 'real-objects';

/** Where, relative to the sandbox dir, the namespace shows the session's current snapshot (see MountPlan). */
export const SNAPSHOT_VIEW_DIR = 'sv';

// Runs as pid 1 of the sandbox's pid namespace. The private overlays for .git and node_modules
// must be mounted before the merged view covers the repository path (afterwards "$REPO/.git"
// would name the merged view's empty mount point), then moved into place. The final loop makes
// the shell reap orphans that get reparented to it, which a bare `sleep` would not.
// The user's object directory is bind-mounted read-only first, while its path still names the
// real one: our plumbing uses it as the alternate inside the namespace (see NamespaceHolder.git).
// `volatile` skips the sync of the whole upper filesystem at unmount (seconds on a busy disk,
// paid at every spawn and discard). Data written through it is ordinary page cache of the upper
// filesystem: it survives our process dying (sessions are resumable) and is written back by the
// kernel as usual; only a machine crash within that window can lose recent writes. Every mount
// gets a fresh work dir, which volatile requires. A shared node_modules the user has since
// deleted is skipped (its sandbox sees an empty dir) instead of failing the whole mount: its
// position still names its private upper, so the list itself never changes.
const HOLDER_SCRIPT = `
set -e
cd "$1"; SB=$2; REPO=$3; LOWERS=$4; SPAWN=$5; O=$6; OBJ=$7; SNAP=$8; shift 8
mount -n --bind "$OBJ" "$SB/${REAL_OBJECTS_DIR}"
mount -n -o remount,bind,ro "$SB/${REAL_OBJECTS_DIR}"
mount -n -t overlay overlay -o "\${O}volatile,lowerdir=$REPO/.git,upperdir=$SB/git/upper,workdir=$SB/git/work" "$SB/stage/git"
i=0; SKIP=" "
for d in "$@"; do
  if [ -d "$REPO/$d" ]; then
    mount -n -t overlay overlay -o "\${O}volatile,lowerdir=$REPO/$d,upperdir=$SB/nm$i/upper,workdir=$SB/nm$i/work" "$SB/stage/nm$i"
  else
    SKIP="$SKIP$i "
  fi
  i=$((i+1))
done
mount -n -t overlay overlay -o "ro,\${O}lowerdir=$SPAWN" "$SB/lv"
if [ -n "$SNAP" ]; then mount -n -t overlay overlay -o "ro,\${O}lowerdir=$SNAP" "$SB/${SNAPSHOT_VIEW_DIR}"; fi
mount -n -t overlay overlay -o "\${O}volatile,lowerdir=$LOWERS,upperdir=$SB/upper,workdir=$SB/work" "$REPO"
mount -n --move "$SB/stage/git" "$REPO/.git"
i=0
for d in "$@"; do
  case "$SKIP" in *" $i "*) ;; *) mount -n --move "$SB/stage/nm$i" "$REPO/$d" ;; esac
  i=$((i+1))
done
read -r hostpid rest < /proc/self/stat
echo "ready $hostpid"
set +e
while :; do sleep 2147483647 & wait; done
`;

function unshareArgs(mode: OverlayMode): string[] {
  const ns = mode === 'userns' ? ['--user', '--map-current-user', '--keep-caps'] : [];
  return [...ns, '--mount', '--propagation', 'private', '--pid', '--fork', '--kill-child'];
}

/**
 * A long-lived process that holds one sandbox's mount namespace. This process reaches the merged
 * view at native speed through /proc/<pid>/root, and commands join it with nsenter, so concurrent
 * commands share one mount instead of mounting the same upper twice (undefined behaviour).
 * setpriv --pdeathsig ties it to this process: if we die, even by SIGKILL, the namespace and its
 * mounts go too.
 */
export class NamespaceHolder {
  private constructor(
    private readonly child: ChildProcess,
    /** The unshare process: in the namespace's mounts, not in its pid namespace. */
    readonly pid: number,
    /** Host pid of the namespace's init (the holder shell). */
    readonly initPid: number,
    private readonly mode: OverlayMode,
    private readonly pidFile: string,
    /** The user's object directory on the host, and where the namespace still reaches it. */
    private readonly realObjects: string,
    private readonly realObjectsInNs: string,
  ) {}

  static async start(mode: OverlayMode, plan: MountPlan, pidFile: string): Promise<NamespaceHolder> {
    const args = [
      '--pdeathsig',
      'KILL',
      '--',
      'unshare',
      ...unshareArgs(mode),
      '--',
      'sh',
      '-c',
      HOLDER_SCRIPT,
      'sandbox-holder',
      plan.sessionDir,
      plan.sandboxRel,
      plan.repoRoot,
      plan.lowers,
      plan.spawnLowers,
      mode === 'userns' ? 'userxattr,' : '',
      plan.realObjects,
      plan.snapshotLowers ?? '',
      ...plan.heavyDirs,
    ];
    // Own process group: a Ctrl-C meant for the CLI must not tear down every sandbox's mounts.
    // No model credentials in its environment: it lives as long as the sandbox.
    const child = spawn('setpriv', args, {
      cwd: plan.sessionDir,
      env: inheritedEnv(),
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr!.on('data', (b: Buffer) => (stderr += b.toString()));
    let stdout = '';
    const ready = await new Promise<number | undefined>((resolve) => {
      child.stdout!.on('data', (b: Buffer) => {
        stdout += b.toString();
        const m = /ready (\d+)\n/.exec(stdout);
        if (m) resolve(Number(m[1]));
      });
      child.once('error', () => resolve(undefined));
      child.once('exit', () => resolve(undefined));
    });
    if (ready === undefined || child.pid === undefined) {
      if (child.exitCode === null) await once(child, 'exit');
      throw new SandboxError(
        'backend-unavailable',
        `Could not mount the sandbox (${mode === 'userns' ? 'user namespace' : 'private mount namespace'} overlay): ${stderr.trim() || 'no output'}. ` +
          'Run with the copy backend if overlay mounts are not allowed here.',
      );
    }
    child.stdout!.removeAllListeners('data');
    child.stdout!.resume();
    const realObjectsInNs = path.join(plan.sessionDir, plan.sandboxRel, REAL_OBJECTS_DIR);
    const holder = new NamespaceHolder(child, child.pid, ready, mode, pidFile, plan.realObjects, realObjectsInNs);
    await writeFile(pidFile, JSON.stringify({ pid: ready, start: (await processStart(ready)) ?? '' }));
    return holder;
  }

  /** Host path of `abs` as seen inside the namespace. */
  hostPath(abs: string): string {
    return path.join(`/proc/${this.pid}/root`, abs);
  }

  // nsenter's --wd resolves the directory before entering the mount namespace, which would put
  // the command in the user's real tree; the shell's cd runs inside it.
  private enterArgs(): string[] {
    return [
      'nsenter',
      '-t',
      String(this.pid),
      ...(this.mode === 'userns' ? ['--user', '--preserve-credentials'] : []),
      '--mount',
      '--',
    ];
  }

  /**
   * argv that runs a shell command inside the namespace, in a pid namespace of its own: when the
   * command is cancelled, or this process dies (pdeathsig), its init dies and the kernel kills
   * everything it started, daemons included. (Joining the holder's pid namespace instead would
   * leave killed commands as zombies there until the host's init reaps them, stalling unmounts.)
   * It gets a /proc of its own (--mount-proc, in a mount namespace copied from the holder's): the
   * host's would show every process's environment, the model credentials of ours included.
   * Capabilities are dropped last: in the user namespace the command could otherwise unmount
   * the view and reach the user's tree; as root only CAP_SYS_ADMIN goes, so root stays root.
   */
  commandArgv(wd: string, command: string): string[] {
    const drop =
      this.mode === 'userns'
        ? ['--inh-caps=-all', '--ambient-caps=-all', '--bounding-set=-all']
        : ['--inh-caps=-sys_admin', '--bounding-set=-sys_admin'];
    return [
      ...this.enterArgs(),
      'setpriv',
      '--pdeathsig',
      'KILL',
      '--',
      'unshare',
      // Unprivileged, exec has already dropped the capabilities nsenter gained, and a pid
      // namespace needs them; a nested user namespace (same uid) in the same call provides them.
      ...(this.mode === 'userns' ? ['--user', '--map-current-user', '--keep-caps'] : []),
      '--pid',
      '--fork',
      '--kill-child',
      '--mount-proc',
      '--',
      'setpriv',
      ...drop,
      '--',
      '/bin/sh',
      '-c',
      'cd "$1" && exec /bin/sh -c "$2"',
      'sandbox-exec',
      wd,
      command,
    ];
  }

  /**
   * git inside the namespace, so work-tree paths mean the merged view. An alternate naming the
   * user's object directory is pointed at its read-only bind: at its own path the namespace has
   * the sandbox's .git overlay, and git would skip writing objects (the blobs of a commit made
   * in the sandbox) that the host, which diffs the trees, cannot see.
   */
  git(): GitRunner {
    return (args, opts = {}) => {
      let env = opts.env;
      const alt = env?.GIT_ALTERNATE_OBJECT_DIRECTORIES;
      if (alt !== undefined) {
        const mapped = alt
          .split(':')
          .map((d) => (path.resolve(d) === path.resolve(this.realObjects) ? this.realObjectsInNs : d))
          .join(':');
        env = { ...env, GIT_ALTERNATE_OBJECT_DIRECTORIES: mapped };
      }
      return makeGitRunner([...this.enterArgs(), '/bin/sh', '-c', 'cd "$0" && exec "$@"', opts.cwd ?? '/'])(args, {
        ...opts,
        env,
        cwd: undefined,
      });
    };
  }

  get alive(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  /**
   * Kills the namespace's init; the kernel then kills everything else in the pid namespace, and
   * unshare exits only after reaping it, so once it has exited the mounts are gone.
   */
  async stop(): Promise<void> {
    if (this.alive) {
      const exited = once(this.child, 'exit');
      killQuietly(this.initPid);
      await exited;
    }
    await rm(this.pidFile, { force: true });
  }
}
