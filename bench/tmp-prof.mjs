import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, realpathSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startFakeMessagesApi } from '@infinity-code/runtime/testing';
const bin = new URL('../packages/cli/dist/main.js', import.meta.url).pathname;
const dir = realpathSync(mkdtempSync(join(tmpdir(), 'ic-prof-')));
writeFileSync(join(dir, 'lib.js'), 'export function add(a, b) {\n  return a - b;\n}\n');
writeFileSync(join(dir, 'test.js'), "import {add} from './lib.js'; if (add(2,3)!==5) process.exit(1); console.log('ok')\n");
writeFileSync(join(dir, 'package.json'), '{"type":"module"}');
const git = (...a) => execFileSync('git', a, { cwd: dir, stdio: 'ignore' });
git('init', '-q'); git('add', '-A'); git('-c', 'user.email=a@b', '-c', 'user.name=a', 'commit', '-qm', 'i');
const t0 = performance.now(); const marks = []; process.env.T0 = String(Date.now());
const steps = [
  { content: [{ type: 'tool_use', name: 'read_file', input: { path: 'lib.js' } }] },
  { content: [{ type: 'tool_use', name: 'edit_file', input: { path: 'lib.js', old_str: 'a - b', new_str: 'a + b' } }] },
  { content: [{ type: 'tool_use', name: 'execute_command', input: { command: 'node test.js' } }] },
  { content: [{ type: 'text', text: 'done' }] },
];
const api = await startFakeMessagesApi({ brain: (body) => { marks.push(performance.now() - t0); const n = body.messages.filter(m => m.role === 'assistant').length; return steps[n]; } });
const home = '/tmp/ic-prof-home'; execFileSync('mkdir', ['-p', home]);
const extra = process.argv.slice(2);
const child = spawn(process.execPath, [...extra, bin, '-p', 'fix', '--yes'], { cwd: dir, env: { T0: process.env.T0, PATH: process.env.PATH, HOME: home, ANTHROPIC_API_KEY: 'x', ANTHROPIC_BASE_URL: api.url, NO_COLOR: '1' }, stdio: ['ignore', 'pipe', 'inherit'] });
child.stdout.resume();
await new Promise((r) => child.on('exit', r));
marks.push(performance.now() - t0);
console.log(marks.map((m) => m.toFixed(0)).join(' '));
await api.close(); rmSync(dir, { recursive: true, force: true }); 
