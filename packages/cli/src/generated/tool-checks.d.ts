// The module `pnpm build` writes to dist/generated/tool-checks.js (scripts/bundle.mjs, with
// toolChecksModule from the runtime): the input checks of the tools the CLI offers, made ahead of
// time. Absent where the CLI runs from its sources (tests): see tool-checks.ts.
import type { ToolChecks } from '@infinity-code/runtime';

export declare const TOOL_CHECKS: ToolChecks;
