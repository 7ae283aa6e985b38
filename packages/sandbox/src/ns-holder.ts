import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { joinCgroupArgs, prlimitArgs, type CommandCgroup, type ResolvedLimits } from './command-limits.js';
import { COMMAND_NS_FD, commandRootStep } from './command-root.js';
import type { CommandUser } from './command-user.js';
import { holderBwrapArgs, type ViewSpec } from './confined-view.js';
import { SandboxError } from './errors.js';
import { makeGitRunner, type GitRunner } from './git.js';
import { childStdio } from './inherited-fds.js';
import { PROXY_BRIDGE, PROXY_PORT } from './network-proxy.js';
import { killQuietly, processStart } from './proc.js';
import { procMaskArgs } from './proc-masks.js';
import { inheritedEnv } from './secret-env.js';
import { timed } from './timing.js';

/** What a holder runs in its namespace before it is ready (the overlay mounts), with its arguments. */
export interface HolderSetup {
  script: string;
  args: readonly string[];
}

export interface HolderPlan {
  view: ViewSpec;
  setup?: HolderSetup;
  /** Working directory of the setup script (paths in it may be relative to it). */
  cwd: string;
  /** Writable in the view for our own git (see git()), read-only for commands. */
  commandReadOnly: readonly string[];
  /** Writable in the view for our own git, hidden from commands. */
  commandHidden: readonly string[];
  /** A filtering proxy's socket to bridge onto the view's loopback (see network-proxy.ts). */
  proxySocket?: string;
  /**
   * Directories of the view this process reads and writes through (hostPath), at most
   * MAX_ANCHORS. The holder opens each once, after its setup and before any command runs, and
   * keeps it open: we reach them through those descriptors, which no rename or symlink a command
   * makes later can redirect (see hostPath).
   */
  anchors: readonly string[];
  /**
   * Set when this process is root: commands (and our git) run as this user, who owns the
   * repository's and the storage's files through idmapped mounts (see command-user.ts).
   */
  commandUser?: CommandUser;
}

/** Descriptors 5-9 of the holder's shell (dash takes single-digit descriptors only). */
const FIRST_ANCHOR_FD = 5;
const MAX_ANCHORS = 5;

export interface CommandPlan {
  /** Absolute working directory inside the view. */
  wd: string;
  command: string;
  limits: ResolvedLimits;
  cgroup: CommandCgroup | undefined;
  /** True: the machine's network for this command, whatever the sandbox's own is. */
  network: boolean;
}

// The final loop makes the shell reap orphans reparented to it, which a bare `sleep` would not.
// Forwards the sandbox's loopback port to the proxy's socket; ready once it listens.
const BRIDGE = `
if [ -n "$IC_PROXY_SOCKET" ]; then
  "$IC_NODE" -e "$IC_BRIDGE" "$IC_PROXY_SOCKET" "$IC_PROXY_PORT" /tmp/.ic-proxy-ready </dev/null >/dev/null 2>&1 &
  n=0
  while [ ! -e /tmp/.ic-proxy-ready ]; do
    n=$((n+1)); [ $n -lt 1000 ] || { echo "the network proxy bridge did not start" >&2; exit 1; }
    sleep 0.01
  done
fi
`;

const READY_THEN_WAIT = `
${Array.from({ length: MAX_ANCHORS }, (_, i) => `[ -z "$IC_ANCHOR_${i}" ] || exec ${FIRST_ANCHOR_FD + i}<"$IC_ANCHOR_${i}"`).join('\n')}
echo ready
set +e
while :; do sleep 2147483647 & wait; done
`;

/**
 * A long-lived process that holds one sandbox's namespaces: the confined view every command of
 * the sandbox shares (built by bubblewrap, see confined-view.ts), a pid namespace, and unless the
 * network is open, a network namespace with only loopback, so a server one command starts is
 * reachable by the next. Commands join it with nsenter; this process reaches the view at native
 * speed through /proc/<pid>/root, where a symlink can only lead to what commands could reach too.
 * bubblewrap's --die-with-parent ties it to this process (bubblewrap sets the parent-death signal
 * on itself and on the namespace's init): if we die, even by SIGKILL, the namespace and its mounts
 * go too.
 */
export class NamespaceHolder {
  private constructor(
    private readonly child: ChildProcess,
    /** Host pid of the namespace's init: the target of nsenter and of /proc/<pid>/root. */
    readonly initPid: number,
    private readonly userns: boolean,
    private readonly pidFile: string,
    /** bubblewrap arguments that take our git's writable storage away from commands. */
    private readonly commandView: readonly string[],
    /** The holder shares the machine's network: nothing to join (an unprivileged user may not). */
    private readonly hostNetwork: boolean,
    /** bubblewrap arguments that make a command's /proc/sys and the like read-only (proc-masks.ts). */
    private readonly procMasks: readonly string[],
    /** The holder's shell, which keeps the anchors open, and what they are (HolderPlan.anchors). */
    private readonly anchors: { pid: number; dirs: readonly string[] },
    /** HolderPlan.commandUser's uid. */
    readonly commandUid: number | undefined,
  ) {}

  static async start(plan: HolderPlan, pidFile: string): Promise<NamespaceHolder> {
    const startedAt = performance.now();
    if (plan.anchors.length > MAX_ANCHORS) throw new Error(`internal: a holder keeps at most ${MAX_ANCHORS} anchors`);
    const anchors = Object.fromEntries(plan.anchors.map((a, i) => [`IC_ANCHOR_${i}`, a]));
    const rootStep = commandRootStep(plan.view);
    const script = `set -e\n${plan.setup?.script ?? ''}\n${rootStep.script}\n${BRIDGE}\n${READY_THEN_WAIT}`;
    const args = [
      ...holderBwrapArgs(plan.view),
      '--info-fd',
      '3',
      '--',
      '/bin/sh',
      '-c',
      script,
      'sandbox-holder',
      ...(plan.setup?.args ?? []),
    ];
    // Own process group: a Ctrl-C meant for the CLI must not tear down every sandbox's mounts.
    // No model credentials in its environment: it lives as long as the sandbox.
    const bridge = plan.proxySocket
      ? { IC_PROXY_SOCKET: plan.proxySocket, IC_PROXY_PORT: String(PROXY_PORT), IC_NODE: process.execPath, IC_BRIDGE: PROXY_BRIDGE }
      : {};
    // As root, bubblewrap starts where the repository and the storage are idmapped for the command user.
    const user = plan.commandUser;
    const [file, ...argv] = user ? [user.helper, String(user.uid), ...user.idmap, '--', 'bwrap', ...args] : ['bwrap', ...args];
    const child = spawn(file, argv, {
      cwd: plan.cwd,
      env: { ...inheritedEnv(), ...bridge, ...anchors, ...rootStep.env },
      detached: true,
      stdio: childStdio(['ignore', 'pipe', 'pipe', 'pipe']),
    });
    let stderr = '';
    child.stderr!.on('data', (b: Buffer) => (stderr += b.toString()));
    // Ready once the setup said so on stdout and bubblewrap named the init's pid on fd 3; the two
    // pipes can be read in either order.
    let info = '';
    let stdout = '';
    const infoPipe = child.stdio[3] as NodeJS.ReadableStream | null;
    const ready = await new Promise<boolean>((resolve) => {
      const check = (): void => {
        if (stdout.includes('ready\n') && childPid(info) !== undefined) resolve(true);
      };
      infoPipe?.on('data', (b: Buffer) => {
        info += b.toString();
        check();
      });
      child.stdout!.on('data', (b: Buffer) => {
        stdout += b.toString();
        check();
      });
      child.once('error', () => resolve(false));
      child.once('exit', () => resolve(false));
    });
    const initPid = ready ? childPid(info) : undefined;
    if (initPid === undefined || child.pid === undefined) {
      if (child.exitCode === null && child.signalCode === null) {
        killQuietly(-child.pid!);
        await once(child, 'exit');
      }
      if (stderr.startsWith('idmap-exec:')) {
        throw new SandboxError(
          'backend-unavailable',
          `Could not map the sandbox's files to the unprivileged user commands run as under root: ${stderr.trim()}. ` +
            'This needs idmapped mounts (Linux 5.19 or later, on a local filesystem such as ext4, xfs, btrfs or tmpfs); or run infinity-code as a regular user.',
        );
      }
      throw new SandboxError(
        'backend-unavailable',
        `Could not set up the sandbox's confined view (bubblewrap): ${stderr.trim() || 'no output'}. ` +
          'Check that bubblewrap (the Debian/Ubuntu package "bubblewrap") is installed and that user namespaces are allowed.',
      );
    }
    child.stdout!.removeAllListeners('data');
    child.stdout!.resume();
    infoPipe?.removeAllListeners('data');
    infoPipe?.resume();
    const commandView = [...plan.commandReadOnly.flatMap((p) => ['--ro-bind', p, p]), ...plan.commandHidden.flatMap((p) => ['--tmpfs', p])];
    // After the command's own /proc: its kernel knobs read-only (see proc-masks.ts).
    // bubblewrap's init (which reaps) runs our shell as its only child: that shell holds the anchors.
    const shellPid = Number((await readFile(`/proc/${initPid}/task/${initPid}/children`, 'utf8').catch(() => '')).trim().split(/\s+/)[0]);
    if (!(shellPid > 0)) {
      killQuietly(-child.pid);
      await once(child, 'exit');
      throw new SandboxError('backend-unavailable', "Could not find the sandbox holder's shell (/proc/<pid>/task/<pid>/children); this kernel may lack CONFIG_PROC_CHILDREN.");
    }
    const holder = new NamespaceHolder(child, initPid, plan.view.userns, pidFile, commandView, plan.view.network, procMaskArgs(), {
      pid: shellPid,
      dirs: plan.anchors,
    }, user?.uid);
    timed('sandbox-mount', startedAt);
    await writeFile(pidFile, JSON.stringify({ pid: initPid, start: (await processStart(initPid)) ?? '' }));
    return holder;
  }

  /**
   * Host path of `abs` as seen inside the namespace, through the holder's descriptor of the anchor
   * that holds it. Not through /proc/<pid>/root: the directories on the way to the repository
   * (under /tmp, a writable path, the state dir's tmpfs) are the commands' to rename, and a
   * symlink put in the place of one would lead this process, which has the user's rights on the
   * whole machine, wherever it points.
   */
  hostPath(abs: string): string {
    // The innermost anchor: the directories between an outer one and `abs` may be commands' too.
    let best: { fd: number; rel: string } | undefined;
    for (const [i, a] of this.anchors.dirs.entries()) {
      const rel = path.relative(a, abs);
      const inside = rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel));
      if (inside && (best === undefined || rel.length < best.rel.length)) best = { fd: FIRST_ANCHOR_FD + i, rel };
    }
    if (!best) throw new Error(`internal: ${abs} is not under one of the sandbox holder's anchors`);
    // Never the descriptor's link itself as the last component: lstat would describe the link.
    return `/proc/${this.anchors.pid}/fd/${best.fd}/${best.rel === '' ? '.' : best.rel}`;
  }

  /**
   * nsenter into the holder's mount and pid namespaces (bubblewrap, which runs next, needs a /proc
   * that shows itself: the holder's), its user namespace when it has one, and its network
   * namespace when `net`.
   */
  private enter(net: boolean, command = false): string[] {
    const mount = command ? `--mount=/proc/${this.anchors.pid}/fd/${COMMAND_NS_FD}` : '--mount';
    return [
      'nsenter',
      '-t',
      String(this.initPid),
      ...(this.userns ? ['--user', '--preserve-credentials'] : []),
      mount,
      '--pid',
      ...(net ? ['--net'] : []),
      '--',
    ];
  }

  /**
   * argv that runs a shell command in the sandbox's view: in its cgroups (when they could be
   * made), in the holder's user, mount and (unless the command has the machine's network) network
   * namespace, under rlimits, then in a pid namespace of its own with its own /proc (bubblewrap):
   * when the command is cancelled, or this process dies, its init dies and the kernel kills
   * everything it started, daemons included. Every capability is dropped before the shell runs,
   * so it cannot unmount the view or mount anything over it.
   */
  commandArgv(plan: CommandPlan): string[] {
    return [
      ...joinCgroupArgs(plan.cgroup),
      ...this.enter(!plan.network && !this.hostNetwork, true),
      ...prlimitArgs(plan.limits),
      'bwrap',
      '--dev-bind',
      '/',
      '/',
      ...this.commandView,
      '--proc',
      '/proc',
      ...this.procMasks,
      '--unshare-pid',
      '--die-with-parent',
      '--cap-drop',
      'ALL',
      ...this.asCommandUser([]),
      '--chdir',
      plan.wd,
      '--',
      ...this.becomeCommandUser([]),
      '/bin/sh',
      '-c',
      plan.command,
    ];
  }

  /**
   * bubblewrap arguments that keep what setpriv needs to become the command user (see
   * becomeCommandUser), with `caps` besides; just `caps` when there is no command user.
   */
  private asCommandUser(caps: readonly string[]): string[] {
    const keep = this.commandUid === undefined ? caps : ['CAP_SETUID', 'CAP_SETGID', 'CAP_SETPCAP', ...caps];
    return keep.flatMap((c) => ['--cap-add', c]);
  }

  /**
   * argv prefix that turns root into the command user, with no supplementary groups, no
   * capabilities but `caps` (kept across exec as ambient ones) and no way to gain any (no new
   * privileges: a setuid or file-capability binary grants nothing). Empty without a command user.
   */
  private becomeCommandUser(caps: readonly string[]): string[] {
    if (this.commandUid === undefined) return [];
    const id = String(this.commandUid);
    const names = caps.map((c) => c.replace(/^CAP_/, '').toLowerCase());
    const set = (prefix: string): string => [prefix, ...names.map((n) => `+${n}`)].join(',');
    return [
      'setpriv',
      `--reuid=${id}`,
      `--regid=${id}`,
      '--clear-groups',
      `--inh-caps=${set('-all')}`,
      ...(names.length > 0 ? [`--ambient-caps=${names.map((n) => `+${n}`).join(',')}`] : []),
      `--bounding-set=${set('-all')}`,
      '--no-new-privs',
      '--',
    ];
  }

  /**
   * git in the sandbox's view, so work-tree paths mean what commands see: in the holder's mount
   * namespace, under bubblewrap, without capabilities but to read and write files whatever their
   * owner; the session's object store and scratch dir are writable there (for commands they are
   * not, see HolderPlan). A symlink a command planted or swaps mid-run can lead git
   * only to what commands can reach. The caller supplies a git dir and config the sandbox cannot
   * write (see git.ts).
   */
  git(): GitRunner {
    // As the command user where there is one: what our git writes in the view is the commands' to change.
    const caps = ['CAP_DAC_OVERRIDE', 'CAP_DAC_READ_SEARCH', 'CAP_FOWNER'];
    return (args, opts = {}) =>
      makeGitRunner([
        ...this.enter(false),
        'bwrap',
        '--dev-bind',
        '/',
        '/',
        '--die-with-parent',
        '--cap-drop',
        'ALL',
        ...this.asCommandUser(caps),
        '--chdir',
        opts.cwd ?? '/',
        '--',
        ...this.becomeCommandUser(caps),
      ])(args, { ...opts, cwd: undefined });
  }

  /**
   * argv prefix that runs a program as root of the holder's user namespace, on the host's
   * mounts: it may read every file of the sandbox's storage whatever mode a command gave it (a
   * directory made 000 hides nothing from storage-usage.ts). Empty where the holder has no user
   * namespace: this process is root already.
   */
  ownerArgv(): string[] {
    // Our own uid is that namespace's root: kept as it is (nsenter would otherwise call
    // setgroups, which bubblewrap denies there), it gets root's capabilities across exec.
    return this.userns ? ['nsenter', '-t', String(this.initPid), '--user', '--preserve-credentials', '--'] : [];
  }

  get alive(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  /**
   * Kills the namespace's init; the kernel then kills everything else in the pid namespace, and
   * bubblewrap exits only after that, so once it has exited the mounts are gone.
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

/** The host pid bubblewrap reports for the sandbox's init (`--info-fd`). */
function childPid(info: string): number | undefined {
  try {
    const pid = (JSON.parse(info) as { 'child-pid'?: unknown })['child-pid'];
    return typeof pid === 'number' && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}
