// Directories outside the repository the user let the agent read (--add-dir). File tools reach
// them only through the sandbox's confined view, as commands do, never with this process's own
// file access: the view shows them read-only and keeps hiding credential locations, so a symlink
// in them that points at ~/.ssh leads nowhere, whatever the model asks.
import path from 'node:path';
import type { Sandbox } from '@infinity-code/sandbox';
import { shellWord } from '@infinity-code/sandbox/shell-word';
import { ToolError } from './errors.js';
import type { ToolEnv } from './tool-kit.js';

/**
 * `raw` when it is an absolute path inside one of `dirs` and not inside the repository (`roots`,
 * whose own paths go through the sandbox as always), normalised; otherwise undefined.
 */
export function addedDirPath(raw: string, dirs: readonly string[], roots: readonly string[]): string | undefined {
  if (dirs.length === 0 || raw.includes('\0')) return undefined;
  const p = raw.replace(/\\/g, '/').trim();
  if (!path.posix.isAbsolute(p)) return undefined;
  const abs = path.posix.normalize(p).replace(/(.)\/+$/, '$1');
  if (roots.some((r) => within(r, abs))) return undefined;
  return dirs.some((d) => within(d, abs)) ? abs : undefined;
}

function within(dir: string, p: string): boolean {
  const rel = path.posix.relative(dir, p);
  return rel === '' || (!rel.startsWith('..') && !path.posix.isAbsolute(rel));
}

/** Reading outside the repository needs the confined view: without one it would reach anything. */
export function requireConfinedView(sb: Sandbox, raw: string): void {
  if (!sb.contained) {
    throw new ToolError(
      `"${raw}" is in a directory added with --add-dir, outside the repository: file tools read those only through ` +
        "the sandbox's confined view, which this machine can't provide. Work with files of the repository instead.",
    );
  }
}

export type AddedEntry = { type: 'dir' } | { type: 'file'; size: number; bytes?: Buffer };

/**
 * What `abs` is in the sandbox's view, and a file's bytes when it holds at most `maxBytes`. One
 * command: a header line (`D`, `F <size>`, `M` missing, `U` unreadable), then the content.
 */
export async function statAddedPath(sb: Sandbox, abs: string, maxBytes: number): Promise<AddedEntry> {
  const q = shellWord(abs);
  const script =
    `if [ -d ${q} ]; then echo D; elif [ ! -e ${q} ]; then echo M; elif [ ! -r ${q} ]; then echo U; ` +
    `else s=$(wc -c < ${q}) && echo "F $s" && if [ "$s" -le ${maxBytes} ]; then cat -- ${q}; fi; fi`;
  const proc = await sb.exec(script, { signal: AbortSignal.timeout(60_000) });
  const chunks: Buffer[] = [];
  let stderr = '';
  proc.stdout.on('data', (b: Buffer) => chunks.push(b));
  proc.stderr.on('data', (b: Buffer) => {
    if (stderr.length < 2_000) stderr += b.toString('utf8');
  });
  const done = await proc.done;
  const out = Buffer.concat(chunks);
  const eol = out.indexOf(0x0a);
  const header = eol < 0 ? out.toString('utf8') : out.subarray(0, eol).toString('utf8');
  if (header === 'D') return { type: 'dir' };
  if (header === 'M') throw new ToolError(`"${abs}" does not exist.`);
  if (header === 'U') throw new ToolError(`"${abs}" is not readable.`);
  const size = /^F\s*(\d+)$/.exec(header)?.[1];
  if (size === undefined || done.exitCode !== 0) {
    throw new ToolError(`"${abs}" could not be read${stderr.trim() ? `: ${stderr.trim()}` : ''}.`);
  }
  const n = Number(size);
  return n <= maxBytes ? { type: 'file', size: n, bytes: out.subarray(eol + 1) } : { type: 'file', size: n };
}

/**
 * For the searches (grep, list_files): the absolute path to search when `raw` names one in an
 * added directory (checked to exist in the view), else undefined (a repository path).
 */
export async function addedSearchPath(sb: Sandbox, env: ToolEnv, raw: string): Promise<string | undefined> {
  const added = addedDirPath(raw, env.readDirs ?? [], [sb.root, ...(env.repoRoot ? [env.repoRoot] : [])]);
  if (added === undefined) return undefined;
  requireConfinedView(sb, raw);
  await statAddedPath(sb, added, 0);
  return added;
}
