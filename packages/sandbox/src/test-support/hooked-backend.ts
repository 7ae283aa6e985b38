// A real backend with test hooks at the points where a crash or a concurrent operation can land
// between two steps of a structural change; shared by tests and the crash child (no vitest here).
import type { BackendSandbox, BackendSession, SandboxBackend, SessionContext } from '../backend.js';

export interface BackendHooks {
  /** The backend made the child (its storage and any layer it stacks on); nothing recorded it yet. */
  afterSpawn?(name: string, ctx: SessionContext): Promise<void>;
  /** A discard dropped the sandbox from the registry; its storage is about to go. */
  beforeDestroy?(name: string, ctx: SessionContext): Promise<void>;
  /** A discard deleted the sandbox's storage; layers nobody stacks on are about to be collected. */
  afterDestroy?(name: string, ctx: SessionContext): Promise<void>;
  /** A base refresh switched the session to the new base and is about to move a sandbox onto it. */
  beforeRebase?(ctx: SessionContext): Promise<void>;
}

/** `inner` with `hooks` run at those points; every real step still runs, in the same order. */
export function hookedBackend(inner: SandboxBackend, hooks: BackendHooks): SandboxBackend {
  return {
    name: inner.name,
    mountsAtRepoPath: inner.mountsAtRepoPath,
    probe: (scratch) => inner.probe(scratch),
    async open(ctx, containment) {
      const session = await inner.open(ctx, containment);
      const watch = (name: string, sb: BackendSandbox): BackendSandbox => {
        const destroy = sb.destroy.bind(sb);
        sb.destroy = async () => {
          await hooks.beforeDestroy?.(name, ctx);
          await destroy();
          await hooks.afterDestroy?.(name, ctx);
        };
        return sb;
      };
      const hooked: BackendSession = {
        createRoot: async (name) => watch(name, await session.createRoot(name)),
        async spawnChild(parent, name, opts) {
          const sb = watch(name, await session.spawnChild(parent, name, opts));
          await hooks.afterSpawn?.(name, ctx);
          return sb;
        },
        collectGarbage: () => session.collectGarbage(),
        rebaseNeedsIdle: session.rebaseNeedsIdle,
        prepareBase: (next, number) => session.prepareBase(next, number),
        async rebase(sb, change) {
          await hooks.beforeRebase?.(ctx);
          await session.rebase(sb, change);
        },
        overridden: (sb, change) => session.overridden(sb, change),
        async restore(saved) {
          const restored = await session.restore(saved);
          for (const [name, sb] of restored.sandboxes) watch(name, sb);
          return restored;
        },
      };
      return hooked;
    },
  };
}
