import { isAbsolute, relative, resolve, sep } from 'node:path';
import type { ContainmentOptions } from '@infinity-code/sandbox';
import { SECRET_ENV_VARS } from '@infinity-code/sandbox/secret-env';
import { EXIT, UserError } from './exit-codes.js';
import { builtInLimits, type BuiltInLimits } from './sandbox-defaults.js';

/** What commands may reach: 'off' (default), 'on', or only these domains (and their subdomains). */
export type NetworkSetting = 'off' | 'on' | { allow: string[] };

/** The `sandbox` object of a config file: what the agent's commands may reach, and for how long. */
export interface SandboxConfig {
  network: NetworkSetting;
  /** With a list of domains: ports besides 80 and 443 that commands may reach on them. */
  networkExtraPorts: number[];
  /**
   * With a list of domains: the allowed names may lead to loopback, private and link-local
   * addresses (an internal registry); otherwise the proxy refuses them.
   */
  networkPrivateAddresses: boolean;
  /** Absolute paths commands may write besides their sandbox. */
  writable: string[];
  /** Absolute paths hidden from commands besides the built-in credential locations. */
  hidden: string[];
  /** Absolute paths under the home commands may read (the home is hidden but for its toolchains). */
  readable: string[];
  /** Variables of ours passed to commands besides the built-in allowlist (credential-like ones too). */
  envAllow: string[];
  /** diskMB: the most a sandbox's own storage may take on disk (what its commands and file writes add). */
  limits: { processes?: number; memoryMB?: number; fileSizeMB?: number; diskMB?: number };
  /** The longest any command may run, in the background too (ms). */
  commandTimeoutMs: number;
  /** Largest changed file put into a diff (MB); the sandbox's own default when unset. */
  maxFileMB?: number;
}

export const DEFAULT_SANDBOX_CONFIG: SandboxConfig = {
  network: 'off',
  networkExtraPorts: [],
  networkPrivateAddresses: false,
  writable: [],
  hidden: [],
  readable: [],
  envAllow: [],
  limits: {},
  commandTimeoutMs: 30 * 60_000,
};

const KEYS = ['network', 'networkExtraPorts', 'networkPrivateAddresses', 'writable', 'hidden', 'readable', 'envAllow', 'limits', 'commandTimeoutMs', 'maxFileMB'] as const;
const LIMIT_KEYS = ['processes', 'memoryMB', 'fileSizeMB', 'diskMB'] as const;
const DOMAIN = /^(?=.{1,253}$)[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/;
const VAR_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Why `value` is not a domain, or undefined when it is one (lower-cased by the caller). */
function domainProblem(value: string): string | undefined {
  if (value.includes('://') || value.includes('/')) return `"${value}" is a URL; give the domain alone, like example.com`;
  if (value.startsWith('*.')) return `"${value}" has a wildcard; write ${value.slice(2)}, which covers its subdomains`;
  if (value.includes(':')) return `"${value}" has a port; give the domain alone`;
  if (!DOMAIN.test(value)) return `"${value}" is not a domain name`;
  return undefined;
}

/** `--network off|on|domain,...`: a usage error (exit 2) when the value is wrong. */
export function parseNetworkFlag(value: string): NetworkSetting {
  const v = value.trim().toLowerCase();
  if (v === 'off' || v === 'on') return v;
  const domains = v.split(',').map((d) => d.trim()).filter((d) => d !== '');
  for (const d of domains) {
    const problem = domainProblem(d);
    if (problem) throw new UserError(`--network: ${problem}. Give off, on, or domains separated by commas.`, EXIT.usage);
  }
  return domains.length === 0 ? 'off' : { allow: domains };
}

/** Reads the `sandbox` value of `file`; wrong values are config errors naming the file and key. */
export function parseSandboxConfig(value: unknown, file: string): Partial<SandboxConfig> {
  const bad = (key: string, want: string) =>
    new UserError(`In ${file}, "sandbox.${key}" must be ${want}. Fix the value or remove the key.`, EXIT.config);
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new UserError(`In ${file}, "sandbox" must be an object, like {"network": "off"}. Fix the value or remove the key.`, EXIT.config);
  }
  const stringList = (key: string, v: unknown, want: string): string[] => {
    if (!Array.isArray(v) || v.some((x) => typeof x !== 'string')) throw bad(key, want);
    return v as string[];
  };
  const paths = (key: string, v: unknown): string[] =>
    stringList(key, v, 'a list of absolute paths').map((p) => {
      if (!isAbsolute(p)) throw bad(key, `a list of absolute paths ("${p}" is relative)`);
      return resolve(p);
    });
  const out: Partial<SandboxConfig> = {};
  for (const [key, v] of Object.entries(value as Record<string, unknown>)) {
    switch (key) {
      case 'network': {
        const want = '"off", "on" or a list of domains like ["registry.npmjs.org"]';
        if (v === 'off' || v === 'on') {
          out.network = v;
          break;
        }
        const domains = stringList(key, v, want).map((d) => d.trim().toLowerCase());
        for (const d of domains) {
          const problem = domainProblem(d);
          if (problem) throw bad(key, `${want} (${problem})`);
        }
        out.network = domains.length === 0 ? 'off' : { allow: domains };
        break;
      }
      case 'networkExtraPorts':
        if (!Array.isArray(v) || v.some((p) => !Number.isInteger(p) || p < 1 || p > 65535)) {
          throw bad(key, 'a list of port numbers from 1 to 65535, like [8443]');
        }
        out.networkExtraPorts = [...new Set(v as number[])];
        break;
      case 'networkPrivateAddresses':
        if (typeof v !== 'boolean') throw bad(key, 'true or false');
        out.networkPrivateAddresses = v;
        break;
      case 'writable':
        out.writable = paths(key, v);
        break;
      case 'hidden':
        out.hidden = paths(key, v);
        break;
      case 'readable':
        out.readable = paths(key, v);
        break;
      case 'envAllow': {
        const names = stringList(key, v, 'a list of environment variable names');
        for (const n of names) {
          if (!VAR_NAME.test(n)) throw bad(key, `a list of environment variable names ("${n}" is not one)`);
          // The agent's own credentials: no setting lets a command see them.
          if ((SECRET_ENV_VARS as readonly string[]).includes(n.toUpperCase())) {
            throw bad(key, `a list of variable names other than ${n}, the agent's own credential, which commands never get`);
          }
        }
        out.envAllow = names;
        break;
      }
      case 'limits':
        out.limits = parseLimits(v, file);
        break;
      case 'commandTimeoutMs':
        if (!Number.isInteger(v) || (v as number) < 1) throw bad(key, 'a whole number of milliseconds, 1 or more');
        out.commandTimeoutMs = v as number;
        break;
      case 'maxFileMB':
        if (typeof v !== 'number' || !Number.isFinite(v) || v <= 0) throw bad(key, 'a number of megabytes above 0');
        out.maxFileMB = v;
        break;
      default:
        throw new UserError(
          `The config file ${file} has an unknown key "sandbox.${key}". Known keys of "sandbox": ${KEYS.join(', ')}.`,
          EXIT.config,
        );
    }
  }
  return out;
}

function parseLimits(value: unknown, file: string): SandboxConfig['limits'] {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new UserError(
      `In ${file}, "sandbox.limits" must be an object, like {"processes": 256, "memoryMB": 4096}. Fix the value or remove the key.`,
      EXIT.config,
    );
  }
  const out: SandboxConfig['limits'] = {};
  for (const [key, v] of Object.entries(value)) {
    if (!(LIMIT_KEYS as readonly string[]).includes(key)) {
      throw new UserError(
        `The config file ${file} has an unknown key "sandbox.limits.${key}". Known keys of "sandbox.limits": ${LIMIT_KEYS.join(', ')}.`,
        EXIT.config,
      );
    }
    if (!Number.isInteger(v) || (v as number) < 1) {
      throw new UserError(`In ${file}, "sandbox.limits.${key}" must be a whole number, 1 or more. Fix the value or remove the key.`, EXIT.config);
    }
    out[key as (typeof LIMIT_KEYS)[number]] = v as number;
  }
  return out;
}

/** `over` on top of `base`, key by key (limits too). */
export function mergeSandboxConfig(base: SandboxConfig, over: Partial<SandboxConfig>): SandboxConfig {
  return { ...base, ...over, limits: { ...base.limits, ...over.limits } };
}

/**
 * The user's settings as a repository's own config (`.infinity/config.json`) narrows them, key by
 * key: what commands may not see (`hidden`) is the union of both, every limit and timeout the
 * lower of the two (the user's, or the built-in one where they set none), and what they may reach
 * (`network`, `writable`, `readable`, `envAllow`) the repository's, which must lie within the user's
 * (wideningKey refuses the rest first); extra ports only those both list, private addresses only
 * if both allow them. A cloned repository can only make a session safer.
 */
export function narrowSandboxConfig(user: SandboxConfig, project: Partial<SandboxConfig>, builtIn: BuiltInLimits = builtInLimits()): SandboxConfig {
  const lower = (mine: number | undefined, theirs: number | undefined, fallback: number): number | undefined =>
    theirs === undefined ? mine : Math.min(mine ?? fallback, theirs);
  const limits = {
    processes: lower(user.limits.processes, project.limits?.processes, builtIn.processes),
    memoryMB: lower(user.limits.memoryMB, project.limits?.memoryMB, builtIn.memoryMB),
    fileSizeMB: lower(user.limits.fileSizeMB, project.limits?.fileSizeMB, builtIn.fileSizeMB),
    diskMB: lower(user.limits.diskMB, project.limits?.diskMB, builtIn.diskMB),
  };
  const maxFileMB = lower(user.maxFileMB, project.maxFileMB, builtIn.maxFileMB);
  return {
    network: project.network ?? user.network,
    networkExtraPorts: user.networkExtraPorts.filter((p) => (project.networkExtraPorts ?? user.networkExtraPorts).includes(p)),
    networkPrivateAddresses: user.networkPrivateAddresses && (project.networkPrivateAddresses ?? true),
    writable: project.writable ?? user.writable,
    readable: project.readable ?? user.readable,
    envAllow: project.envAllow ?? user.envAllow,
    hidden: [...new Set([...user.hidden, ...(project.hidden ?? [])])],
    limits: Object.fromEntries(Object.entries(limits).filter(([, v]) => v !== undefined)),
    commandTimeoutMs: Math.min(user.commandTimeoutMs, project.commandTimeoutMs ?? Infinity),
    ...(maxFileMB !== undefined ? { maxFileMB } : {}),
  };
}

/**
 * A repository's own config (`.infinity/config.json`) may narrow what the user's config lets
 * commands reach, never widen it: a cloned repository could carry one that opens the network,
 * the user's files or their tokens to a prompt-injected agent. Returns the first key that
 * widens, with why, or undefined.
 */
export function wideningKey(user: SandboxConfig, project: Partial<SandboxConfig>): { key: string; why: string } | undefined {
  if (project.network !== undefined && !networkWithin(project.network, user.network)) {
    return { key: 'network', why: `it opens the network beyond your own setting (${describeNetwork(user.network)})` };
  }
  const port = project.networkExtraPorts?.find((p) => !user.networkExtraPorts.includes(p));
  if (port !== undefined) return { key: 'networkExtraPorts', why: `port ${port} is not among your own networkExtraPorts` };
  if (project.networkPrivateAddresses === true && !user.networkPrivateAddresses) {
    return { key: 'networkPrivateAddresses', why: 'your own config keeps the proxy from loopback, private and link-local addresses' };
  }
  const outside = project.writable?.find((p) => !user.writable.some((u) => isWithin(p, u)));
  if (outside !== undefined) return { key: 'writable', why: `${outside} is not writable in your own config` };
  const unreadable = project.readable?.find((p) => !user.readable.some((u) => isWithin(p, u)));
  if (unreadable !== undefined) return { key: 'readable', why: `${unreadable} is not readable in your own config` };
  const name = project.envAllow?.find((n) => !user.envAllow.includes(n));
  if (name !== undefined) return { key: 'envAllow', why: `${name} is not let through in your own config` };
  return undefined;
}

function networkWithin(inner: NetworkSetting, outer: NetworkSetting): boolean {
  if (inner === 'off' || outer === 'on') return true;
  if (inner === 'on' || outer === 'off') return false;
  return inner.allow.every((d) => outer.allow.some((o) => d === o || d.endsWith(`.${o}`)));
}

export function describeNetwork(n: NetworkSetting): string {
  return typeof n === 'string' ? n : n.allow.join(', ');
}

function isWithin(path: string, dir: string): boolean {
  const rel = relative(dir, path);
  return rel === '' || (rel !== '..' && !rel.startsWith(`..${sep}`) && !isAbsolute(rel));
}

/** What the sandbox session is opened with; `network` (the --network flag) overrides the config. */
export function containmentOf(c: SandboxConfig, network?: NetworkSetting): ContainmentOptions {
  const limits = {
    ...(c.limits.processes !== undefined ? { processes: c.limits.processes } : {}),
    ...(c.limits.memoryMB !== undefined ? { memoryBytes: c.limits.memoryMB * 1024 * 1024 } : {}),
    ...(c.limits.fileSizeMB !== undefined ? { fileSizeBytes: c.limits.fileSizeMB * 1024 * 1024 } : {}),
    ...(c.limits.diskMB !== undefined ? { diskBytes: c.limits.diskMB * 1024 * 1024 } : {}),
  };
  const chosen = network ?? c.network;
  return {
    // The proxy's ports and addresses go with whichever list of domains applies, the flag's too.
    network:
      typeof chosen === 'object'
        ? { allow: chosen.allow, extraPorts: c.networkExtraPorts, privateAddresses: c.networkPrivateAddresses }
        : chosen,
    writable: c.writable,
    hidden: c.hidden,
    readable: c.readable,
    ...(Object.keys(limits).length > 0 ? { limits } : {}),
  };
}

/** `sandbox.maxFileMB` in bytes, for AgentSession's maxDiffFileBytes. */
export function maxDiffFileBytes(c: SandboxConfig): number | undefined {
  return c.maxFileMB === undefined ? undefined : Math.round(c.maxFileMB * 1024 * 1024);
}
