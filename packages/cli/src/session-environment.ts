import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { release, type as osType, arch } from 'node:os';
import { join, relative, sep } from 'node:path';
import { repoSummary, type RepoSummary } from '@infinity-code/sandbox';
import { commandShell } from '@infinity-code/tools';
import type { NetworkSetting } from './sandbox-config.js';

/** What the model is told about where it works, as of the session's start. */
export interface EnvironmentFacts {
  /** YYYY-MM-DD, local time. */
  date: string;
  platform: string;
  shell: string;
  root: string;
  /** Where the user started us, relative to the root ('' at the root). */
  cwd: string;
  git: RepoSummary;
  /** The project is a folder in no git repository (then `git` says nothing). */
  folder?: boolean;
  network: NetworkSetting;
  /** Extra writable places outside the repository (sandbox.writable). */
  writable: readonly string[];
  /** Directories outside the repository the agent may read (--add-dir); absent in older records. */
  readable?: readonly string[];
  /** A command that failed for lack of network may run again with it, if the user agrees (TUI). */
  networkRerun: boolean;
}

export interface GatherOptions {
  root: string;
  cwd: string;
  /** A folder in no git repository: no git status to ask for. */
  folder?: boolean;
  network: NetworkSetting;
  writable: readonly string[];
  readable?: readonly string[];
  networkRerun: boolean;
  now?: Date;
}

export async function gatherEnvironment(o: GatherOptions): Promise<EnvironmentFacts> {
  const now = o.now ?? new Date();
  const rel = relative(o.root, o.cwd);
  return {
    date: `${now.getFullYear()}-${String(now.getMonth() + 1).padStart(2, '0')}-${String(now.getDate()).padStart(2, '0')}`,
    platform: `${osType()} ${release()} (${arch()})`,
    shell: commandShell().name,
    root: o.root,
    cwd: rel.startsWith('..') || rel === '' ? '' : rel.split(sep).join('/'),
    git: o.folder ? { branch: undefined, changes: [], more: 0 } : await repoSummary(o.root),
    ...(o.folder ? { folder: true } : {}),
    network: o.network,
    writable: o.writable,
    ...(o.readable && o.readable.length > 0 ? { readable: o.readable } : {}),
    networkRerun: o.networkRerun,
  };
}

/** The environment part of the system prompt. */
export function environmentText(f: EnvironmentFacts): string {
  const lines = [
    `Environment, as of this session's start on ${f.date}:`,
    f.folder
      ? `- Platform: ${f.platform}. Commands run in ${f.shell}, from the project folder: ${f.root}.`
      : `- Platform: ${f.platform}. Commands run in ${f.shell}, from the repository root: ${f.root}.`,
  ];
  if (f.cwd !== '') lines.push(`- The user started Infinity Code in ${f.cwd}/ (paths stay relative to the repository root).`);
  if (f.folder) lines.push('- Git: none. This folder is not a git repository (no branch, no history, no git status).');
  else if (f.git.branch === undefined) lines.push('- Git: not available for this directory.');
  else {
    const changes = f.git.changes.length === 0 ? ' Working tree clean.' : ' Uncommitted changes (git status --short):';
    lines.push(`- Git branch: ${f.git.branch}.${changes}`);
    for (const c of f.git.changes) lines.push(`    ${c}`);
    if (f.git.more > 0) lines.push(`    ... and ${f.git.more} more`);
  }
  lines.push(`- Sandbox: ${networkText(f)} Commands can write only the ${f.folder ? 'folder' : 'repository'} (your sandbox's copy of it), a private /tmp${f.writable.length > 0 ? `, and ${f.writable.join(', ')}` : ''}. The home directory is hidden, but for toolchain caches (read-only).`);
  if (f.readable && f.readable.length > 0) {
    lines.push(
      `- Also readable, outside the repository (read-only: read_file, grep and list_files take absolute paths there, and commands see them): ${f.readable.join(', ')}.`,
    );
  }
  return lines.join('\n');
}

function networkText(f: EnvironmentFacts): string {
  if (f.network === 'on') return 'commands have the network.';
  if (f.network !== 'off') return `commands reach only these domains, through a proxy: ${f.network.allow.join(', ')}.`;
  return f.networkRerun
    ? 'commands have no network; when one fails for lack of it, the user is asked whether it may run again with the network.'
    : 'commands have no network (the user can allow it with --network or the sandbox.network setting).';
}

/**
 * The session's environment text, gathered at its start and kept under .infinity/environment/:
 * the system prompt must stay the same, byte for byte, for a whole session (its cached prefix and
 * the model's thinking are bound to it), so a resumed session reads what it was first told.
 */
export async function sessionEnvironment(infinityDir: string, sessionId: string, gather: () => Promise<EnvironmentFacts>): Promise<string> {
  try {
    return readFileSync(environmentFile(infinityDir, sessionId), 'utf8');
  } catch {
    // Not kept yet (or unreadable: told anew, which costs one cache write, not the session).
  }
  const text = environmentText(await gather());
  keepEnvironment(infinityDir, sessionId, text);
  return text;
}

/** Records `text` as what session `sessionId` is told (a session started by /new shares its process's). */
export function keepEnvironment(infinityDir: string, sessionId: string, text: string): void {
  const file = environmentFile(infinityDir, sessionId);
  mkdirSync(join(infinityDir, 'environment'), { recursive: true });
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, text);
  renameSync(tmp, file);
}

function environmentFile(infinityDir: string, sessionId: string): string {
  return join(infinityDir, 'environment', `${sessionId.replace(/[^A-Za-z0-9_-]/g, '_')}.txt`);
}
