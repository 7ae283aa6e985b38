// The input checks of the tools the CLI offers, made when it was built (generated/tool-checks.d.ts),
// so that a session checks its first tool call without loading Ajv. Where they are missing (the
// CLI run from its sources) or stale (a schema changed since), the runtime compiles the schema on
// first use instead: slower, never wrong (see the runtime's tool-checks.ts).
import type { ToolChecks } from '@infinity-code/runtime';

let loaded: Promise<ToolChecks> | undefined;

/** The checks made at build time, or none. Loaded once per process. */
export function toolChecks(): Promise<ToolChecks> {
  return (loaded ??= import('./generated/tool-checks.js').then(
    (m) => m.TOOL_CHECKS,
    () => new Map(),
  ));
}
