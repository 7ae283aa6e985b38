// Holds a session in a separate process and waits to be SIGKILLed by a test. Modes:
//   busy  - a parent and a child with work and commands in flight (for the gc test);
//   stack - the resume stack (stack.ts), its fingerprint written to argv[5] first.
// Prints `READY <session id>` once everything is in place.
import { writeFile } from 'node:fs/promises';
import { openSession, type BackendName } from '../index.js';
import { buildStack, fingerprint } from './stack.js';

const [repo, stateDir, backend, mode, expectFile] = process.argv.slice(2) as [string, string, BackendName, string, string?];
const session = await openSession({ repo, stateDir, backend, collectStale: false });
if (mode === 'stack') {
  await buildStack(session);
  await session.get('grand')!.exec('sleep 300 & sleep 300');
  await writeFile(expectFile!, JSON.stringify(await fingerprint(session)));
} else {
  const parent = await session.create('parent');
  await parent.writeFile('p.txt', 'p\n');
  const child = await session.create('child', parent);
  await child.writeFile('c.txt', 'c\n');
  await child.exec('sleep 300');
  await parent.exec('sleep 300 & sleep 300');
}
process.stdout.write(`READY ${session.id}\n`);
