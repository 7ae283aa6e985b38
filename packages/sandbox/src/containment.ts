import path from 'node:path';
import { resolveLimits, type ResolvedLimits } from './command-limits.js';
import { hiddenPaths, type HiddenPath } from './confined-view.js';
import { SandboxError } from './errors.js';

/**
 * What a sandbox's commands may reach beyond the sandbox's own view of the repository. The
 * defaults hold against a hostile command: the rest of the machine read-only, a private /tmp,
 * credential locations hidden, no network, bounded processes, memory and file size.
 */
export interface ContainmentOptions {
  /**
   * 'off' (default): only loopback, private to the sandbox. 'on': the machine's network.
   * `{ allow }`: only these domains (`example.com` also allows its subdomains), through a local
   * proxy that the commands' HTTP(S)_PROXY variables name.
   */
  network?: 'off' | 'on' | { allow: readonly string[] };
  /** Extra absolute paths commands may write (besides the sandbox and its private /tmp). */
  writable?: readonly string[];
  /** Extra absolute paths hidden from commands (besides the built-in credential locations). */
  hidden?: readonly string[];
  limits?: CommandLimits;
}

export interface CommandLimits {
  /** Processes (and threads) a command may have at once. */
  processes?: number;
  /** Memory a command may use, in bytes. */
  memoryBytes?: number;
  /** Largest file a command may write, in bytes. */
  fileSizeBytes?: number;
}

/** ContainmentOptions made concrete for one session (defaults applied, paths checked). */
export interface SessionContainment {
  network: 'off' | 'on' | { allow: readonly string[] };
  writable: readonly string[];
  hidden: readonly HiddenPath[];
  limits: ResolvedLimits;
  /** Hidden from commands as a whole: other sessions, other repositories' sandboxes. */
  stateDir: string;
  /**
   * With a domain allowlist: the Unix socket of the session's filtering proxy (network-proxy.ts),
   * which each sandbox's holder bridges onto its loopback.
   */
  proxySocket?: string;
}

export async function resolveContainment(opts: ContainmentOptions = {}, stateDir: string): Promise<SessionContainment> {
  for (const p of [...(opts.writable ?? []), ...(opts.hidden ?? [])]) {
    if (!path.isAbsolute(p)) {
      throw new SandboxError('invalid-argument', `Containment paths must be absolute; "${p}" is not. Give the full path.`);
    }
  }
  return {
    network: opts.network ?? 'off',
    writable: (opts.writable ?? []).map((p) => path.resolve(p)),
    hidden: await hiddenPaths(opts.hidden ?? []),
    limits: resolveLimits(opts.limits),
    stateDir,
  };
}
