// Holds a session in a separate process and waits to be SIGKILLed by a test. Modes:
//   busy            - a parent and a child with work and commands in flight (for the gc test);
//   stack           - the resume stack (stack.ts), its fingerprint written to argv[5] first;
//   restack:<point> - the restack sequence (restack.ts), stopped for good at that point, in the
//                     middle of whatever operation it falls in;
//   refresh         - the refresh scenario (refresh.ts) after its refresh, fingerprint to argv[5];
//   refresh-interrupted - the same, stopped for good once the refresh switched the base, before
//                     it moved the first sandbox onto it.
// Prints `READY <session id>` once everything is in place.
import { writeFile } from 'node:fs/promises';
import { backendByName, openSession, type BackendName, type SandboxSession } from '../index.js';
import { hookedBackend } from './hooked-backend.js';
import { agentWork, userEdits } from './refresh.js';
import { restackScenario, type RestackPoint } from './restack.js';
import { buildStack, fingerprint } from './stack.js';

const [repo, stateDir, backend, mode, expectFile] = process.argv.slice(2) as [string, string, BackendName, string, string?];

if (mode.startsWith('restack:')) {
  const at = mode.slice('restack:'.length) as RestackPoint;
  // eslint-disable-next-line prefer-const -- a callback made before the assignment reads it
  let session: SandboxSession | undefined;
  const scenario = restackScenario(async (point) => {
    if (point !== at) return;
    process.stdout.write(`READY ${session!.id}\n`);
    // Never resumes: whatever the sequence was doing stays half done until the SIGKILL.
    setInterval(() => undefined, 60_000);
    await new Promise<never>(() => undefined);
  });
  session = await openSession({ repo, stateDir, backend: hookedBackend(backendByName(backend), scenario.hooks), collectStale: false });
  await scenario.run(session);
  throw new Error(`the restack sequence never reached ${at}`);
}

if (mode === 'refresh' || mode === 'refresh-interrupted') {
  // eslint-disable-next-line prefer-const -- a callback made before the assignment reads it
  let session: SandboxSession | undefined;
  const hooks = {
    async beforeRebase() {
      if (mode !== 'refresh-interrupted') return;
      process.stdout.write(`READY ${session!.id}\n`);
      setInterval(() => undefined, 60_000);
      await new Promise<never>(() => undefined);
    },
  };
  session = await openSession({ repo, stateDir, backend: hookedBackend(backendByName(backend), hooks), collectStale: false });
  const { child } = await agentWork(session);
  await userEdits(repo);
  await session.refreshBase();
  await child.exec('sleep 300');
  await writeFile(expectFile!, JSON.stringify(await fingerprint(session)));
  process.stdout.write(`READY ${session.id}\n`);
} else {
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
}
