// A fingerprint of a user's repository: every file (outside .infinity) with its bytes, HEAD, the
// index and the status. Equal fingerprints mean nothing of the user's changed.
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, readlinkSync, lstatSync } from 'node:fs';
import { join } from 'node:path';
import { git } from './cli.js';

export function treeFingerprint(repo: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (dir: string, rel: string): void => {
    for (const name of readdirSync(dir)) {
      const r = rel ? `${rel}/${name}` : name;
      if (r === '.infinity' || r === '.git') continue;
      const p = join(dir, name);
      const st = lstatSync(p);
      if (st.isDirectory()) walk(p, r);
      else if (st.isSymbolicLink()) out[r] = `-> ${readlinkSync(p)}`;
      else out[r] = createHash('sha1').update(readFileSync(p)).digest('hex');
    }
  };
  walk(repo, '');
  let head = '(unborn)';
  try {
    head = git(repo, 'rev-parse', 'HEAD').trim();
  } catch {
    // no commits yet
  }
  out['<HEAD>'] = head;
  out['<refs>'] = git(repo, 'for-each-ref', '--format=%(refname) %(objectname)');
  out['<index>'] = createHash('sha1').update(readFileSync(join(repo, '.git', 'index'))).digest('hex');
  // The session's own directory (.infinity) is git-ignored once it has run; it is not the user's.
  out['<status>'] = git(repo, '--no-optional-locks', 'status', '--porcelain')
    .split('\n')
    .filter((l) => l !== '' && !l.endsWith(' .infinity/'))
    .join('\n');
  return out;
}
