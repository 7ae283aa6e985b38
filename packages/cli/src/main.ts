#!/usr/bin/env node
// The `infinity-code` binary. `pnpm build` also bundles the CLI (scripts/bundle.mjs) into
// dist/cli.bundle.js, dist/bundle/ and dist/headless/: a few files to load before the first frame
// or model request instead of ~580 modules of tsc's output and its dependencies, which took most
// of the time to it. The bundle runs when it is at least as new as the TypeScript build; after a
// bare `tsc -b` it may be stale, and tsc's own modules (dist/cli.js) run instead: slower to start,
// same code.
import { statSync } from 'node:fs';

const mtime = (path: string) => statSync(new URL(path, import.meta.url), { throwIfNoEntry: false })?.mtimeMs;
const bundle = mtime('./cli.bundle.js');
const built = mtime('../tsconfig.tsbuildinfo');
// --debug stack traces name the TypeScript sources, not the bundle's lines.
if (process.argv.includes('--debug')) process.setSourceMapsEnabled(true);
await import(bundle !== undefined && (built === undefined || bundle >= built) ? './cli.bundle.js' : './cli.js');
