import { lstatSync, realpathSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { quietly } from './confined-view.js';
import { isWithin } from './repo.js';

/**
 * Toolchain locations under the home that builds and tests read: language installs, version
 * managers and package caches, none of which holds a credential (the credential files some of
 * them sit beside, `.cargo/credentials` say, are not listed). Shown read-only; the rest of the
 * home is not shown at all. README's containment section lists them.
 */
export const HOME_TOOLCHAINS = [
  '.nvm',
  '.volta',
  '.fnm',
  '.local/share/fnm',
  '.asdf',
  '.pyenv',
  '.rbenv',
  '.rustup',
  '.cargo/bin',
  '.cargo/registry',
  '.cargo/git',
  '.local/bin',
  '.local/lib',
  '.local/share/pnpm',
  '.local/pipx',
  '.local/share/virtualenvs',
  '.virtualenvs',
  '.bun',
  '.deno',
  'go',
  '.sdkman',
  '.m2/repository',
  '.gradle/caches',
  '.gradle/wrapper',
  '.npm/_cacache',
  '.yarn/berry/cache',
  '.pnpm-store',
  '.cache/pip',
  '.cache/pnpm',
  '.cache/yarn',
  '.cache/go-build',
  '.cache/ms-playwright',
  '.cache/node-gyp',
  '.cache/uv',
  '.cache/deno',
  '.cache/puppeteer',
  '.dotnet',
  '.nuget/packages',
  'miniconda3',
  'anaconda3',
  // Corepack's package managers, browser and Electron downloads, JVM and other toolchain managers.
  '.cache/node',
  '.cache/electron',
  '.cache/Cypress',
  '.cache/bazel',
  '.cache/coursier',
  '.ivy2/cache',
  '.local/share/mise',
  '.proto',
  '.ghcup',
  '.cabal/packages',
  '.opam',
  '.elan',
  '.juliaup',
];

/**
 * Machine directories where services keep their Unix sockets (Docker, containerd, systemd, the
 * session bus, PostgreSQL, MySQL, snapd, ssh agents under /run/user). A socket answers connect()
 * on a read-only mount, so these are not shown at all.
 */
const SOCKET_DIRS = ['/run', '/var/run'];

/**
 * Files under /run a command may need read: the resolver configuration /etc/resolv.conf often
 * links to (with the machine's network on), and NixOS's system profile, where its PATH leads.
 */
const RUN_KEEP = ['/run/current-system'];

/** The directory each sandbox's commands get as their own empty tmpfs (see holderBwrapArgs). */
const PRIVATE_TMP = '/tmp';

/** What the view covers with an empty read-only directory, and what it shows of them again, read-only. */
export interface CoveredDirs {
  dirs: readonly string[];
  keep: readonly string[];
}

export interface CoverInput {
  /** The user's home (undefined or '/': not covered). */
  home: string | undefined;
  /** Absolute paths the user lets commands read (config `sandbox.readable`, --add-dir). */
  readable: readonly string[];
  /** The repository and the state dir: a home inside one of them is not covered. */
  inside: readonly string[];
}

/** `p` when it is a real directory (not a link to one), resolved. */
function realDir(p: string): string | undefined {
  const st = quietly(() => lstatSync(p, { throwIfNoEntry: false }));
  return st?.isDirectory() ? p : undefined;
}

/**
 * Which directories to cover and what to show again. Credentials are hidden by default, not by
 * a list: the home is covered whole, then the toolchains and the user's `readable` paths shown
 * read-only (the credential list still hides what they hold). The socket directories are
 * covered, keeping the resolver file /etc/resolv.conf leads to. A home (or /run) that holds the
 * repository or the state dir is covered anyway: both are mounted again above it; a home inside
 * one of them is not.
 * Synchronous lstat calls, as hiddenPaths (confined-view.ts) and for the same reason.
 */
export function coveredDirs(input: CoverInput): CoveredDirs {
  const dirs: string[] = [];
  const keep: string[] = [];
  const home = input.home ? realDir(path.resolve(input.home)) : undefined;
  // A home at / or inside what must stay shown (a home inside the repository) is left as it is.
  if (home && home !== '/' && !input.inside.some((p) => isWithin(p, home))) {
    dirs.push(home);
    for (const rel of HOME_TOOLCHAINS) {
      const p = path.join(home, rel);
      if (quietly(() => lstatSync(p, { throwIfNoEntry: false }))) keep.push(p);
    }
  }
  for (const d of SOCKET_DIRS) {
    const real = realDir(d);
    // Covered even when the repository or the state dir is inside: both are mounted again above.
    if (real) dirs.push(real);
  }
  const resolv = quietly(() => realpathSync('/etc/resolv.conf'));
  if (resolv && dirs.some((d) => isWithin(d, resolv))) keep.push(resolv);
  for (const p of RUN_KEEP) if (quietly(() => statSync(p, { throwIfNoEntry: false }))) keep.push(p);
  for (const p of input.readable) {
    const abs = path.resolve(p);
    // Under /tmp too, which every sandbox gets privately: shown inside it. /tmp itself never is
    // (commands would lose their own writable one).
    const hiddenHere = dirs.some((d) => isWithin(d, abs)) || (abs !== PRIVATE_TMP && isWithin(PRIVATE_TMP, abs));
    if (hiddenHere && quietly(() => lstatSync(abs, { throwIfNoEntry: false }))) keep.push(abs);
  }
  return { dirs, keep: [...new Set(keep)] };
}

/** The home coveredDirs() is given by default: this process's. */
export function defaultHome(): string | undefined {
  return process.env.HOME ?? os.homedir();
}
