// Opens a session, leaves work in flight, prints READY and waits to be SIGKILLed by the gc test.
import { openSession, type BackendName } from '../index.js';

const [repo, stateDir, backend] = process.argv.slice(2) as [string, string, BackendName];
const session = await openSession({ repo, stateDir, backend, collectStale: false });
const parent = await session.create('parent');
await parent.writeFile('p.txt', 'p\n');
const child = await session.create('child', parent);
await child.writeFile('c.txt', 'c\n');
await child.exec('sleep 300');
await parent.exec('sleep 300 & sleep 300');
process.stdout.write('READY\n');
