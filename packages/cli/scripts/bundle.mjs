// Bundles the CLI for start-up time (`pnpm build` runs it after `tsc -b`).
//
// Loading tsc's output module by module made Node resolve, read and compile some 580 modules
// before the first TUI frame (Ink's dependencies ~500 of them, 415 es-toolkit's), which took
// most of the start-up time. esbuild bundles it from tsc's output into dist/cli.bundle.js, with the
// lazily imported parts (the TUI, headless runs, the session) as chunks in dist/bundle/ that
// stay lazy. dist/main.js picks the bundle when it is at least as new as the TypeScript build.
//
// The workspace packages (@infinity-code/*) are bundled in too, with their pure-JS dependencies
// (the Anthropic SDK, ajv, diff): a headless run loads them all before its first model request,
// and module by module (some 300 files) that took longer than the rest of its start-up
// (`pnpm bench:headless`). `inlineWorkspace: false` leaves them out (resolved from node_modules).
//
// better-sqlite3's JavaScript is bundled too (loading its CommonJS files one by one delayed the first
// model request), but not its compiled addon: the runtime opens databases with the addon's path in
// the installed package (packages/runtime/src/sqlite-module.ts), so the package is still installed
// with the CLI (NATIVE_ADDONS), at the very version whose JavaScript the bundle carries.
//
// Left out of the bundle and resolved from node_modules as before:
// - @vscode/ripgrep, which the tools use: it locates its binary relative to its own module, which
//   a bundle would break; the CLI package lists it as its own dependency, so the bundle resolves
//   it, and so does the published package. The tools load it with require() when a search runs
//   (REQUIRED_AT_RUN_TIME), which the bundler leaves alone;
// - react-devtools-core: Ink's optional devtools (DEV=true), not installed.
import { rmSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { fileURLToPath, pathToFileURL } from 'node:url';
import * as esbuild from 'esbuild';

const root = fileURLToPath(new URL('..', import.meta.url));
const dist = `${root}dist`;

/**
 * React, its reconciler and the scheduler pick their production or development build by
 * NODE_ENV when loaded; bundled, both builds would be parsed at start-up. The CLI always ran
 * the production build unless NODE_ENV was set (src/run-tui.ts), so the bundle keeps only that.
 */
const reactProduction = {
  name: 'react-production',
  setup(build) {
    build.onLoad({ filter: /[\\/]node_modules[\\/](react|react-reconciler|scheduler)[\\/][^\\/]+\.js$/ }, async (args) => ({
      contents: (await readFile(args.path, 'utf8')).replaceAll('process.env.NODE_ENV', '"production"'),
      loader: 'js',
    }));
  },
};

/** What no bundle may contain (see the top of this file). */
export const UNBUNDLED = ['@vscode/ripgrep', 'react-devtools-core'];

/** The packages of UNBUNDLED that the bundle loads with require() (see the top of this file). */
export const REQUIRED_AT_RUN_TIME = ['@vscode/ripgrep'];

/** Bundled packages whose compiled addon is loaded from their install (see the top of this file). */
export const NATIVE_ADDONS = ['better-sqlite3'];

/**
 * Bundles tsc's output (dist/cli.js) into `outdir`/cli.bundle.js and `outdir`/bundle/, replacing
 * what a previous run wrote there. Returns esbuild's metafile (the inputs and outputs).
 */
export async function bundleCli({ outdir = dist, inlineWorkspace = true, sourcemap = true } = {}) {
  rmSync(`${outdir}/bundle`, { recursive: true, force: true });
  rmSync(`${outdir}/cli.bundle.js`, { force: true });
  rmSync(`${outdir}/cli.bundle.js.map`, { force: true });

  const result = await esbuild.build({
    absWorkingDir: root,
    entryPoints: ['dist/cli.js'],
    outdir,
    entryNames: '[name].bundle',
    chunkNames: 'bundle/[name]-[hash]',
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    external: inlineWorkspace ? UNBUNDLED : ['@infinity-code/*', ...UNBUNDLED],
    plugins: [reactProduction],
    // Bundled CommonJS (React, commander, ...) requires Node's built-in modules.
    banner: { js: "import { createRequire as __bundleRequire } from 'node:module'; const require = __bundleRequire(import.meta.url);" },
    sourcemap: sourcemap ? 'linked' : false,
    sourcesContent: false,
    metafile: true,
    logLevel: 'warning',
  });
  // Warnings fail the build too: a require() esbuild could not resolve would fail only at run time.
  if (result.errors.length > 0 || result.warnings.length > 0) throw new Error('esbuild reported warnings or errors (above)');
  return result.metafile;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  try {
    const metafile = await bundleCli();
    const files = Object.entries(metafile.outputs).filter(([f]) => f.endsWith('.js'));
    const bytes = files.reduce((n, [, o]) => n + o.bytes, 0);
    console.log(`bundle: ${files.length} files, ${(bytes / 1024).toFixed(0)} KiB in dist/cli.bundle.js and dist/bundle/`);
  } catch (err) {
    console.error(err instanceof Error ? err.message : err);
    process.exit(1);
  }
}
