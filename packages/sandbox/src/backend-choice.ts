import type { BackendName, SandboxBackend } from './backend.js';
import { SandboxError } from './errors.js';
import { backendByName, probeBackend, probeBackends } from './probe.js';
import type { RepoInfo } from './repo.js';

export type BackendChoice = BackendName | SandboxBackend | undefined;

/** The backend for a new session: the caller's choice, or the start-up probe's. */
export async function pickBackend(choice: BackendChoice, stateDir: string, repo: RepoInfo): Promise<SandboxBackend> {
  if (choice !== undefined && typeof choice !== 'string') return choice;
  const backend = choice ? backendByName(choice) : backendByName((await probeBackends(stateDir)).chosen);
  const problem = backend.mountsAtRepoPath ? overlayObstacle(repo, stateDir) : undefined;
  if (problem === undefined) return backend;
  if (choice) {
    throw new SandboxError('backend-unavailable', `The ${backend.name} backend cannot serve this repository: ${problem}. Use the copy backend here.`);
  }
  return backendByName('copy');
}

/**
 * The backend a session to resume was made with. Its storage only makes sense to that backend,
 * so there is no fallback: when it does not work here (another user, a kernel that changed),
 * the caller must open a fresh session.
 */
export async function recordedBackend(
  sessionId: string,
  recorded: BackendName,
  choice: BackendChoice,
  stateDir: string,
  repo: RepoInfo,
): Promise<SandboxBackend> {
  const chosenName = typeof choice === 'object' ? choice.name : choice;
  if (chosenName !== undefined && chosenName !== recorded) {
    throw new SandboxError(
      'invalid-argument',
      `Sandbox session ${sessionId} was made with the ${recorded} backend and can only be resumed with it; ` +
        `leave the backend unset to resume it, or open a fresh session to use ${chosenName}.`,
    );
  }
  const backend = typeof choice === 'object' ? choice : backendByName(recorded);
  const outcome = await probeBackend(backend, stateDir);
  const problem = !outcome.ok ? outcome.detail : backend.mountsAtRepoPath ? overlayObstacle(repo, stateDir) : undefined;
  if (problem !== undefined) {
    throw new SandboxError(
      'backend-unavailable',
      `Sandbox session ${sessionId} needs the ${recorded} backend, which does not work here: ${problem}. ` +
        'Resume it as the user and on the machine that made it, or open a fresh session.',
    );
  }
  return backend;
}

/** Layouts the overlay backends cannot mount, whatever the kernel allows. */
function overlayObstacle(repo: RepoInfo, stateDir: string): string | undefined {
  if (!repo.dotGitIsDir && !repo.folder) return `${repo.root}/.git is not a directory (a linked worktree or submodule)`;
  // overlay's mount options are comma separated and lowerdir is colon separated.
  if (/[,:]/.test(repo.root) || /[,:]/.test(stateDir)) return 'its path or the state dir contains "," or ":"';
  return undefined;
}
