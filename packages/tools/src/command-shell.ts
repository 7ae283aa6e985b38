import { accessSync, constants } from 'node:fs';

/** Where bash lives on the machines we run on; commands see the machine's /bin and /usr. */
const BASH = '/bin/bash';

export interface CommandShell {
  /** What the model is told runs its commands. */
  name: string;
  /** The shell the sandbox runs commands in (ExecOptions.shell); undefined: its /bin/sh. */
  path: string | undefined;
}

/**
 * Commands run in bash where the machine has it: models write bash (`{1..3}`, `[[ ]]`,
 * `set -o pipefail`, `<<<`), and /bin/sh is often dash, which refuses all of them. `path`:
 * another bash, or '' for plain /bin/sh.
 */
export function commandShell(path: string = BASH): CommandShell {
  if (path !== '' && isExecutable(path)) return { name: 'bash', path };
  return { name: '/bin/sh', path: undefined };
}

function isExecutable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}
