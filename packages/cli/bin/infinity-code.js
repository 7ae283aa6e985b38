#!/usr/bin/env node
// The workspace's `infinity-code` bin (node_modules/.bin/infinity-code of the packages that depend
// on the CLI). It is committed rather than built because pnpm links bins at install time, before
// anything is built, and warns ("Failed to create bin") when the target does not exist yet. The
// program itself is dist/main.js; the published package runs that directly (scripts/pack.mjs).
import { existsSync } from 'node:fs';

const main = new URL('../dist/main.js', import.meta.url);
if (!existsSync(main)) {
  process.stderr.write('infinity-code is not built yet: run `pnpm build` in the repository first.\n');
  process.exit(1);
}
await import(main.href);
