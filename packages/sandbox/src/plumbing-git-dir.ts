import { mkdirSync } from 'node:fs';
import { readFile, rename, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { pathExists, removeTree } from './fs-util.js';
import { nulFields, text } from './git.js';
import type { RepoInfo } from './repo.js';
import { userTreeGit } from './trusted-git.js';

/** The session's own git dir, session-relative. */
export const PLUMBING_GIT_DIR = 'plumbing.git';

/**
 * Makes the session's own git dir, which every git run over sandbox content uses (see
 * trusted-git.ts), unless it is already there. Only this process writes it, and it lies outside
 * every sandbox, so no command can plant config, hooks or attributes in it. It holds what makes
 * git read the user's repository the same way their own git does, and nothing that runs a program:
 * the object format, the settings that shape how files are read (READING_SETTINGS), and the ignore
 * rules that live outside the tree (the repository's `info/exclude` and the user's global excludes
 * file), all as they are when it is made. Objects never go here but to the session's store
 * (objectEnv), and there are no refs. Made whole under a temporary name and renamed into place, so
 * a crash never leaves half of it.
 */
export async function ensurePlumbingGitDir(sessionDir: string, repo: RepoInfo): Promise<string> {
  const dir = path.join(sessionDir, PLUMBING_GIT_DIR);
  if (await pathExists(path.join(dir, 'HEAD'))) return dir;
  const partial = `${dir}.partial`;
  await removeTree(partial);
  for (const sub of ['objects', 'refs', 'info']) mkdirSync(path.join(partial, sub), { recursive: true });
  const settings = await userSettings(repo);
  const sha256 = settings.objectFormat === 'sha256';
  const core = [['repositoryformatversion', sha256 ? '1' : '0'], ['bare', 'true'], ...settings.reading];
  const config =
    `[core]\n${core.map(([k, v]) => `\t${k} = ${quoted(v)}\n`).join('')}` + (sha256 ? '[extensions]\n\tobjectFormat = sha256\n' : '');
  await writeFile(path.join(partial, 'config'), config);
  // Later lines win: the repository's own rules over the user's global ones, as in git.
  const rules = [await globalExcludes(settings.excludesFile), await readText(path.join(repo.commonDir, 'info', 'exclude'))];
  await writeFile(path.join(partial, 'info', 'exclude'), rules.filter(Boolean).join('\n'));
  await writeFile(path.join(partial, 'HEAD'), 'ref: refs/heads/none\n');
  // A directory without HEAD is what a crash before this rename could not leave; anything else is stale.
  await removeTree(dir);
  await rename(partial, dir);
  return dir;
}

// Settings that decide how the user's git reads files from a work tree (line endings, modes,
// links, the case and Unicode form of names), so that sandbox files hash the same way. Values
// only: none of them names a program.
const READING_SETTINGS = /^core\.(autocrlf|eol|filemode|symlinks|ignorecase|precomposeunicode)$/;
const ASKED = /^(core\.(autocrlf|eol|filemode|symlinks|ignorecase|precomposeunicode|excludesfile)|extensions\.objectformat)$/;

interface UserSettings {
  objectFormat: string;
  /** The user's effective values of READING_SETTINGS (the last one git reads wins), by name within [core]. */
  reading: [string, string][];
  /** `core.excludesFile` as git would expand it, if set. */
  excludesFile: string | undefined;
}

/**
 * Everything the git dir copies from the user's configuration, in one git process (this runs while
 * a session opens): the object format from the repository's own config file alone (as git itself
 * reads it), the other values as the user's git sees them.
 */
async function userSettings(repo: RepoInfo): Promise<UserSettings> {
  const out = await userTreeGit(repo)(['config', '--null', '--show-scope', '--get-regexp', ASKED.source], { cwd: repo.root, okExitCodes: [1] });
  const fields = nulFields(out.stdout);
  let objectFormat = 'sha1';
  let excludes: string | undefined;
  const reading = new Map<string, string>();
  for (let i = 0; i + 1 < fields.length; i += 2) {
    const scope = fields[i];
    const entry = fields[i + 1];
    const nl = entry.indexOf('\n');
    const key = nl < 0 ? entry : entry.slice(0, nl);
    // A key without a value (`[core] filemode`) means true.
    const value = nl < 0 ? 'true' : entry.slice(nl + 1);
    if (key === 'extensions.objectformat') {
      if (scope === 'local') objectFormat = value.toLowerCase();
    } else if (key === 'core.excludesfile') excludes = value;
    else if (READING_SETTINGS.test(key)) reading.set(key.slice('core.'.length), value);
  }
  return { objectFormat, reading: [...reading], excludesFile: await expandPath(repo, excludes) };
}

/** A path value as `git config --path` gives it: `~/` is the home directory. */
async function expandPath(repo: RepoInfo, value: string | undefined): Promise<string | undefined> {
  if (value === undefined || value === '') return undefined;
  if (value.startsWith('~/')) return path.join(process.env.HOME || os.homedir(), value.slice(2));
  if (!value.startsWith('~')) return value;
  // `~user/...`: rare enough to ask git itself.
  return text(await userTreeGit(repo)(['config', '--path', '--get', 'core.excludesFile'], { cwd: repo.root, okExitCodes: [1] })) || undefined;
}

function quoted(value: string): string {
  return `"${value.replace(/[\\"]/g, '\\$&').replace(/\n/g, '\\n')}"`;
}

/** The user's global ignore rules: `core.excludesFile`, or git's default location for them. */
async function globalExcludes(configured: string | undefined): Promise<string> {
  const xdg = process.env.XDG_CONFIG_HOME || path.join(process.env.HOME || os.homedir(), '.config');
  return readText(configured || path.join(xdg, 'git', 'ignore'));
}

async function readText(file: string): Promise<string> {
  const content = await readFile(file, 'utf8').catch(() => '');
  return content === '' || content.endsWith('\n') ? content : `${content}\n`;
}
