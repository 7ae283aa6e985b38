import { existsSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { resolveLimits, type ResolvedLimits } from './command-limits.js';
import { hiddenPaths, type HiddenPath } from './confined-view.js';
import { coveredDirs, defaultHome, type CoveredDirs } from './covered-dirs.js';
import { SandboxError } from './errors.js';
import { startNetworkProxy, type NetworkProxy } from './network-proxy.js';
import type { ProxyPolicy } from './proxy-policy.js';

/**
 * What a sandbox's commands may reach beyond the sandbox's own view of the repository. The
 * defaults hold against a hostile command: the rest of the machine read-only, a private /tmp,
 * credential locations hidden, no network, bounded processes, memory, file size and disk.
 */
export interface ContainmentOptions {
  /**
   * 'off' (default): only loopback, private to the sandbox. 'on': the machine's network.
   * `{ allow }`: only these domains (`example.com` also allows its subdomains), on ports 80 and
   * 443 (and `extraPorts`), at public addresses (and local and private ones with
   * `privateAddresses`), through a local proxy that the commands' HTTP(S)_PROXY variables name.
   */
  network?: 'off' | 'on' | ProxyPolicy;
  /** Extra absolute paths commands may write (besides the sandbox and its private /tmp). */
  writable?: readonly string[];
  /** Extra absolute paths hidden from commands (besides the built-in credential locations). */
  hidden?: readonly string[];
  /**
   * Absolute paths commands may read where the view would not show them: under the home (not
   * shown except its toolchain locations, covered-dirs.ts), /run, or /tmp (each sandbox's own).
   * Read-only unless also under `writable`; credential locations in them stay hidden. Elsewhere
   * the machine is readable anyway.
   */
  readable?: readonly string[];
  /** Whose home to cover: this process's unless given (tests). */
  home?: string;
  limits?: CommandLimits;
}

export interface CommandLimits {
  /** Processes (and threads) a command may have at once. */
  processes?: number;
  /** Memory a command may use, in bytes. */
  memoryBytes?: number;
  /** Largest file a command may write, in bytes. */
  fileSizeBytes?: number;
  /**
   * The most a sandbox's own storage may take on disk, in bytes: what its commands and file
   * writes add (see disk-watch.ts), not what it shares with the base or its parent.
   */
  diskBytes?: number;
}

/** ContainmentOptions made concrete for one session (defaults applied, paths checked). */
export interface SessionContainment {
  network: 'off' | 'on' | ProxyPolicy;
  writable: readonly string[];
  hidden: readonly HiddenPath[];
  /** The home and the socket directories commands do not see, and what of them they do. */
  covered: CoveredDirs;
  limits: ResolvedLimits;
  /** Hidden from commands as a whole: other sessions, other repositories' sandboxes. */
  stateDir: string;
  /**
   * This program's own files (its install, and Node's) where the view would otherwise cover them
   * (under /tmp): our tools run binaries from there in the sandbox (ripgrep for grep).
   */
  programPaths: readonly string[];
  /**
   * With a domain allowlist: the Unix socket of the session's filtering proxy (network-proxy.ts),
   * which each sandbox's holder bridges onto its loopback.
   */
  proxySocket?: string;
}

export async function resolveContainment(opts: ContainmentOptions = {}, stateDir: string): Promise<SessionContainment> {
  for (const p of [...(opts.writable ?? []), ...(opts.hidden ?? []), ...(opts.readable ?? [])]) {
    if (!path.isAbsolute(p)) {
      throw new SandboxError('invalid-argument', `Containment paths must be absolute; "${p}" is not. Give the full path.`);
    }
  }
  const ports = typeof opts.network === 'object' ? (opts.network.extraPorts ?? []) : [];
  const badPort = ports.find((p) => !Number.isInteger(p) || p < 1 || p > 65535);
  if (badPort !== undefined) {
    throw new SandboxError('invalid-argument', `Network ports are whole numbers from 1 to 65535; ${badPort} is not one.`);
  }
  return {
    network: opts.network ?? 'off',
    writable: (opts.writable ?? []).map((p) => path.resolve(p)),
    hidden: await hiddenPaths(opts.hidden ?? []),
    covered: coveredDirs({ home: opts.home ?? defaultHome(), readable: opts.readable ?? [], inside: [stateDir] }),
    limits: resolveLimits(opts.limits),
    stateDir,
    programPaths: programPaths(stateDir, opts.home ?? defaultHome()),
  };
}

/** The topmost directory above this module that holds node_modules (the install), and Node's prefix. */
function programPaths(stateDir: string, home: string | undefined): string[] {
  let install: string | undefined;
  for (let dir = path.dirname(fileURLToPath(import.meta.url)); dir !== path.dirname(dir); dir = path.dirname(dir)) {
    if (existsSync(path.join(dir, 'node_modules'))) install = dir;
  }
  const candidates = [install, path.dirname(path.dirname(process.execPath))].filter((p): p is string => p !== undefined);
  const coverers = [os.tmpdir(), '/tmp', stateDir, ...(home && home !== '/' ? [home] : [])];
  const covered = (p: string): boolean => coverers.some((c) => p === c || p.startsWith(`${c}/`));
  // Paths outside what the view covers are visible as they are: binding them again could only hide
  // a writable path the user configured inside them.
  return [...new Set(candidates.filter(covered))];
}

/**
 * With a domain allowlist, starts the session's filtering proxy (its socket in the session's
 * scratch dir: reachable by each sandbox's holder, hidden from commands) and names it in the
 * containment the backend gets; otherwise the containment as it is.
 */
export async function withNetworkProxy(
  c: SessionContainment,
  tmpDir: string,
): Promise<{ containment: SessionContainment; proxy?: NetworkProxy }> {
  if (typeof c.network !== 'object') return { containment: c };
  const proxy = await startNetworkProxy(path.join(tmpDir, 'proxy.sock'), c.network);
  return { containment: { ...c, proxySocket: proxy.socketPath }, proxy };
}
