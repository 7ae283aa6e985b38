// Words for /bin/sh: commands reach a sandbox as one shell line (Sandbox.exec), so whatever
// builds one from separate words quotes them here.

/** A POSIX shell word holding `s` exactly: as it is when nothing in it is special, else quoted. */
export function shellWord(s: string): string {
  return /^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}

/** A line that runs `argv` in place of the shell (its exit is the program's). */
export function execLine(argv: readonly string[]): string {
  return `exec ${argv.map(shellWord).join(' ')}`;
}
