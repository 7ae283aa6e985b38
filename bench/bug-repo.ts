// The small repository both the headless and the TUI case run in: lib.js's add() subtracts, and
// test.js says so.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, realpathSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const BUGGY = 'return a - b;';
export const FIXED = 'return a + b;';

/** A fresh committed repository in a temporary folder; the caller removes it. */
export function makeRepo(): string {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), 'ic-bench-headless-')));
  writeFileSync(join(dir, 'lib.js'), `// Adds two numbers.\nexport function add(a, b) {\n  ${BUGGY}\n}\n`);
  writeFileSync(
    join(dir, 'test.js'),
    "import assert from 'node:assert';\nimport { add } from './lib.js';\nassert.strictEqual(add(2, 3), 5);\nconsole.log('ok');\n",
  );
  writeFileSync(join(dir, 'package.json'), '{ "name": "bench-headless", "type": "module" }\n');
  const git = (...args: string[]) => execFileSync('git', args, { cwd: dir, stdio: 'ignore' });
  git('init', '-q');
  git('add', '-A');
  git('-c', 'user.email=bench@example.com', '-c', 'user.name=bench', 'commit', '-qm', 'init');
  return dir;
}
