import { afterEach, describe } from 'vitest';
import { backendByName, openSession, type BackendName, type SandboxSession } from '../index.js';
import { hookedBackend, type BackendHooks } from './hooked-backend.js';
import { registerChangeTests } from './suite-changes.js';
import { registerExecTests } from './suite-exec.js';
import { registerIsolationTests } from './suite-isolation.js';
import { registerResumeTests } from './suite-resume.js';
import { cleanupTempDirs, tempDir } from './fixtures.js';

export interface SuiteContext {
  backend: BackendName;
  /** Overlay backends show the merged view at the repository's own path. */
  mountsAtRepoPath: boolean;
  /**
   * Opens a session on `repo` with this backend (in a fresh temp state dir unless given, or
   * resuming `resume`), with `hooks` on the backend if given; closed after the test.
   */
  open(repo: string, opts?: { stateDir?: string; resume?: string; collectStale?: boolean; hooks?: BackendHooks }): Promise<SandboxSession>;
}

/**
 * The one suite every backend must pass. Each backend's test file calls this; tests use real git
 * repositories in temp dirs, real processes and (for overlay backends) real mounts.
 */
export function registerBackendSuite(backend: BackendName): void {
  const sessions: SandboxSession[] = [];
  const ctx: SuiteContext = {
    backend,
    mountsAtRepoPath: backend !== 'copy',
    async open(repo, { hooks, ...opts } = {}) {
      const stateDir = opts.stateDir ?? (await tempDir('ic-state-'));
      const session = await openSession({ ...opts, repo, stateDir, backend: hooks ? hookedBackend(backendByName(backend), hooks) : backend });
      sessions.push(session);
      return session;
    },
  };

  describe(`sandbox backend ${backend}`, () => {
    afterEach(async () => {
      while (sessions.length > 0) await sessions.pop()!.close();
      await cleanupTempDirs();
    });
    registerIsolationTests(ctx);
    registerExecTests(ctx);
    registerChangeTests(ctx);
    registerResumeTests(ctx);
  });
}
