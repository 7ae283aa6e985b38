import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';

/**
 * Whether an executable `name` is in a directory of `pathVar` (PATH): what `command -v` answers
 * for a program, without starting a shell for it (a spawn of a large Node process costs tens of
 * milliseconds, paid on the way to a session's first request).
 */
export function onPath(name: string, pathVar: string | undefined = process.env.PATH): boolean {
  return (pathVar ?? '').split(delimiter).some((dir) => {
    if (dir === '') return false;
    try {
      accessSync(join(dir, name), constants.X_OK);
      return true;
    } catch {
      return false;
    }
  });
}
