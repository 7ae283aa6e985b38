import { afterEach, describe } from 'vitest';
import { backendByName, openSession, type BackendName, type ContainmentOptions, type OpenSessionOptions, type SandboxBackend, type SandboxSession } from '../index.js';
import { hookedBackend, type BackendHooks } from './hooked-backend.js';
import { registerChangeTests } from './suite-changes.js';
import { registerConfinementTests } from './suite-confinement.js';
import { registerFolderTests } from './suite-folder.js';
import { registerContainmentTests, registerExecTests } from './suite-exec.js';
import { registerGitViewTests } from './suite-git-view.js';
import { registerIsolationTests } from './suite-isolation.js';
import { registerPolicyTests } from './suite-policy.js';
import { registerRefreshTests } from './suite-refresh.js';
import { registerResumeTests } from './suite-resume.js';
import { registerTrustedGitTests } from './suite-trusted-git.js';
import { cleanupTempDirs, tempDir } from './fixtures.js';

export interface SuiteContext {
  backend: BackendName;
  /** Overlay backends show the merged view at the repository's own path. */
  mountsAtRepoPath: boolean;
  /**
   * Commands see the host's processes in /proc: only the copy backend's fallback where pid
   * namespaces are unavailable.
   */
  commandsSeeHostProcesses: boolean;
  /**
   * Opens a session on `repo` with this backend (in a fresh temp state dir unless given, or
   * resuming `resume`), with `hooks` on the backend if given; closed after the test.
   */
  open(
    repo: string,
    opts?: {
      stateDir?: string;
      resume?: string;
      collectStale?: boolean;
      hooks?: BackendHooks;
      containment?: ContainmentOptions;
      applyPolicy?: OpenSessionOptions['applyPolicy'];
      allowFolder?: boolean;
    },
  ): Promise<SandboxSession>;
}

/**
 * The one suite every backend must pass. Each backend's test file calls this; tests use real git
 * repositories in temp dirs, real processes and (for overlay backends) real mounts.
 */
export function registerBackendSuite(backend: BackendName): void {
  describeBackend(`sandbox backend ${backend}`, backend, (ctx) => {
    registerIsolationTests(ctx);
    registerExecTests(ctx);
    registerChangeTests(ctx);
    registerResumeTests(ctx);
    registerRefreshTests(ctx);
    registerConfinementTests(ctx);
    registerPolicyTests(ctx);
    registerTrustedGitTests(ctx);
    registerGitViewTests(ctx);
    registerFolderTests(ctx);
  });
}

/**
 * The containment tests (daemons, cancel, credentials) alone, for a variant of a backend (e.g. the
 * copy backend's fallback where pid namespaces are unavailable).
 */
export function registerContainmentSuite(label: string, backend: SandboxBackend, opts: { commandsSeeHostProcesses: boolean }): void {
  describeBackend(label, backend, registerContainmentTests, opts);
}

/** `choice` is passed to openSession as given (a name gets the same checks as in production). */
function describeBackend(
  label: string,
  choice: BackendName | SandboxBackend,
  register: (ctx: SuiteContext) => void,
  opts: { commandsSeeHostProcesses?: boolean } = {},
): void {
  const backend = typeof choice === 'string' ? backendByName(choice) : choice;
  const sessions: SandboxSession[] = [];
  const ctx: SuiteContext = {
    backend: backend.name,
    mountsAtRepoPath: backend.mountsAtRepoPath,
    commandsSeeHostProcesses: opts.commandsSeeHostProcesses ?? false,
    async open(repo, { hooks, ...rest } = {}) {
      const stateDir = rest.stateDir ?? (await tempDir('ic-state-'));
      const session = await openSession({ ...rest, repo, stateDir, backend: hooks ? hookedBackend(backend, hooks) : choice });
      sessions.push(session);
      return session;
    },
  };

  describe(label, () => {
    afterEach(async () => {
      while (sessions.length > 0) await sessions.pop()!.close();
      await cleanupTempDirs();
    });
    register(ctx);
  });
}
