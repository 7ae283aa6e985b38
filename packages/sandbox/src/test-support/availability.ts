import { backendByName, type BackendName } from '../index.js';
import { cleanupTempDirs, tempDir } from './fixtures.js';

/** Why `name` cannot run on this machine (as this user), or undefined when it can. */
export async function unavailableReason(name: BackendName): Promise<string | undefined> {
  const scratch = await tempDir('ic-probe-');
  try {
    const outcome = await backendByName(name).probe(scratch);
    return outcome.ok ? undefined : outcome.detail;
  } finally {
    await cleanupTempDirs();
  }
}
