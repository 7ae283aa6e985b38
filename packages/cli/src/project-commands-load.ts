import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { COMMAND_FOLDERS, commandNameOf, parseCommandFile, type CommandFileProblem, type ProjectCommand, type ProjectCommands } from './project-commands.js';

/** A prompt larger than this is surely not one: left out with a note rather than sent. */
const MAX_COMMAND_BYTES = 256 * 1024;
/** `a/b/c.md` is `/a:b:c`; deeper folders are not walked (and a symlink loop ends here). */
const MAX_DEPTH = 6;

/**
 * The project commands of the repository at `root`, read from the user's working tree now (a
 * few small files: callers read them again when they need them, so edits show at once). Synchronous
 * so that Tab completion can use it.
 */
export function loadProjectCommands(root: string): ProjectCommands {
  const commands: ProjectCommand[] = [];
  const problems: CommandFileProblem[] = [];
  const taken = new Set<string>();
  for (const folder of COMMAND_FOLDERS) {
    for (const pathInFolder of markdownFiles(join(root, folder), '', 0)) {
      const file = `${folder}/${pathInFolder}`;
      const name = commandNameOf(pathInFolder);
      if (name === undefined) {
        problems.push({ file, message: `${file} is left out: a command name has only letters, digits, "_", "-" and "." in each part.` });
        continue;
      }
      // `.infinity/commands` wins over `.claude/commands`: the same name there is not a problem.
      if (taken.has(name)) continue;
      const read = readCommandFile(join(root, folder, pathInFolder), name, file);
      if (read.ok) {
        taken.add(name);
        commands.push(read.command);
      } else problems.push({ file, name, message: `${file} is left out: ${read.message}.` });
    }
  }
  commands.sort((a, b) => a.name.localeCompare(b.name));
  return { commands, problems };
}

function readCommandFile(path: string, name: string, file: string): ReturnType<typeof parseCommandFile> {
  try {
    const size = statSync(path).size;
    if (size > MAX_COMMAND_BYTES) return { ok: false, message: `it is ${Math.round(size / 1024)} KB, more than a prompt can be (256 KB)` };
    return parseCommandFile(readFileSync(path, 'utf8'), name, file);
  } catch (err) {
    return { ok: false, message: `it cannot be read (${(err as NodeJS.ErrnoException).code ?? String(err)})` };
  }
}

/** `.md` files under `dir`, as paths relative to it, sorted; nothing when `dir` doesn't exist. */
function markdownFiles(dir: string, prefix: string, depth: number): string[] {
  let names: string[];
  try {
    names = readdirSync(dir).sort();
  } catch {
    return [];
  }
  const out: string[] = [];
  for (const name of names) {
    if (name.startsWith('.')) continue;
    const rel = prefix === '' ? name : `${prefix}/${name}`;
    let isDir: boolean;
    try {
      // Followed: a command folder may be a symlink to a shared one.
      isDir = statSync(join(dir, name)).isDirectory();
    } catch {
      continue;
    }
    if (isDir) {
      if (depth < MAX_DEPTH) out.push(...markdownFiles(join(dir, name), rel, depth + 1));
    } else if (/\.md$/i.test(name)) out.push(rel);
  }
  return out;
}
