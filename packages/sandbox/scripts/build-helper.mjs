// Builds idmap-exec into dist/ (`pnpm build` runs it after `tsc -b`): a root-run CLI runs its
// commands as an unprivileged user through it (src/command-user.ts). Without a C compiler the build
// goes on: the CLI then says, when it runs as root, what to install.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { builtHelperName, compileHelper } from '../dist/command-user.js';

if (process.platform === 'linux') {
  const dest = fileURLToPath(new URL(`../dist/${builtHelperName()}`, import.meta.url));
  if (!existsSync(dest)) {
    try {
      await compileHelper(dest);
    } catch (err) {
      console.warn(`warning: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
}
