// Runs one command in a sandbox from a process whose parent left descriptors open for it (the
// test passes them), as the CLI's parent may. Prints the run's result as JSON on stdout.
import { openSession, type BackendName } from '../index.js';

const [repo, stateDir, backend, command] = process.argv.slice(2) as [string, string, BackendName, string];

const session = await openSession({ repo, stateDir, backend });
try {
  const sb = await session.create('root');
  process.stdout.write(JSON.stringify(await sb.run(command)));
} finally {
  await session.close();
}
