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
// A headless run is a build of its own, dist/headless/: run-headless.js with everything it loads
// before its first model request in one file (the Anthropic SDK, the sandbox package and the MCP
// client stay lazy chunks beside it). In the main build the modules it shares with the TUI, the
// demo and the CLI were split into some twenty chunks by which of those load them, and Node
// spends ~0.4 ms on each module it loads: ~8 ms sooner to the first request (`pnpm
// bench:headless`). What both builds contain is duplicated on disk and, in one process, loaded
// once at most per build. What crosses between them: options, writers and a signal from the CLI,
// the demo's scripted provider, and errors back; errors are told apart by name or by the marks of
// UserError and ModelError (exit-codes.ts, runtime's errors.ts), not by class identity.
//
// better-sqlite3's JavaScript is bundled too (loading its CommonJS files one by one delayed the
// first model request), but not its compiled addon: the runtime opens databases with the addon's
// path in the installed package (packages/runtime/src/sqlite-module.ts), so the package is still
// installed with the CLI (NATIVE_ADDONS), at the very version whose JavaScript the bundle carries.
//
// Left out of the bundle and resolved from node_modules as before:
// - @vscode/ripgrep, which the tools use: it locates its binary relative to its own module, which
//   a bundle would break; the CLI package lists it as its own dependency, so the bundle resolves
//   it, and so does the published package. The tools load it with require() when a search runs
//   (REQUIRED_AT_RUN_TIME), which the bundler leaves alone;
// - react-devtools-core: Ink's optional devtools (DEV=true), not installed.
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
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

/** Bundled packages whose compiled addon loads from their install (see the top of this file). */
export const NATIVE_ADDONS = ['better-sqlite3'];

/**
 * Headless runs come from a build of their own (see the top of this file): the main build leaves
 * `import('./run-headless.js')` to it, the path written relative to where the importing code lands
 * (cli.js's in cli.bundle.js, demo.js's in bundle/).
 */
const HEADLESS_DIR = 'headless';
const headlessApart = {
  name: 'headless-apart',
  setup(build) {
    build.onResolve({ filter: /^\.\/run-headless\.js$/ }, (args) => ({
      path: args.importer === `${dist}/cli.js` ? `./${HEADLESS_DIR}/run-headless.js` : `../${HEADLESS_DIR}/run-headless.js`,
      external: true,
    }));
  },
};

/**
 * Writes dist/generated/tool-checks.js: the input checks of the tools the CLI offers, made now
 * (src/tool-checks.ts), so that a session's first tool call loads no Ajv. Before the bundles,
 * which take it in.
 */
async function writeToolChecks() {
  const { offeredTools } = await import(pathToFileURL(`${dist}/offered-tools.js`).href);
  const { toolChecksModule } = await import('@infinity-code/runtime');
  mkdirSync(`${dist}/generated`, { recursive: true });
  writeFileSync(`${dist}/generated/tool-checks.js`, await toolChecksModule(await offeredTools()));
}

/**
 * Bundles tsc's output into `outdir`: dist/cli.js into cli.bundle.js and bundle/,
 * dist/run-headless.js into headless/ (see the top of this file), replacing what a previous run
 * wrote there. Returns esbuild's metafile of both builds (their inputs and outputs).
 */
export async function bundleCli({ outdir = dist, inlineWorkspace = true, sourcemap = true } = {}) {
  await writeToolChecks();
  rmSync(`${outdir}/bundle`, { recursive: true, force: true });
  rmSync(`${outdir}/${HEADLESS_DIR}`, { recursive: true, force: true });
  rmSync(`${outdir}/cli.bundle.js`, { force: true });
  rmSync(`${outdir}/cli.bundle.js.map`, { force: true });

  const common = {
    absWorkingDir: root,
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    external: inlineWorkspace ? UNBUNDLED : ['@infinity-code/*', ...UNBUNDLED],
    // Bundled CommonJS (React, commander, ...) requires Node's built-in modules.
    banner: { js: "import { createRequire as __bundleRequire } from 'node:module'; const require = __bundleRequire(import.meta.url);" },
    sourcemap: sourcemap ? 'linked' : false,
    sourcesContent: false,
    // No whitespace or comments: a quarter to a half less to read, decode and parse before the
    // first model request (~20 ms sooner in `pnpm bench:headless`), and ASCII throughout (the
    // comments esbuild keeps had arrows and dashes, which made whole files two-byte text to decode
    // and scan). Names stay: errors are told by name, and --debug's stack traces use the maps.
    minifyWhitespace: true,
    metafile: true,
    logLevel: 'warning',
  };
  const builds = [
    await esbuild.build({
      ...common,
      entryPoints: ['dist/cli.js'],
      outdir,
      entryNames: '[name].bundle',
      chunkNames: 'bundle/[name]-[hash]',
      plugins: [reactProduction, headlessApart],
    }),
    await esbuild.build({
      ...common,
      entryPoints: ['dist/run-headless.js'],
      outdir: `${outdir}/${HEADLESS_DIR}`,
      entryNames: '[name]',
      chunkNames: '[name]-[hash]',
      plugins: [reactProduction],
    }),
  ];
  // Warnings fail the build too: a require() esbuild could not resolve would fail only at run time.
  if (builds.some((r) => r.errors.length > 0 || r.warnings.length > 0)) throw new Error('esbuild reported warnings or errors (above)');
  const metafile = {
    inputs: Object.assign({}, ...builds.map((r) => r.metafile.inputs)),
    outputs: Object.assign({}, ...builds.map((r) => r.metafile.outputs)),
  };
  // Each path left to the other build must lead to a file it wrote.
  for (const [file, output] of Object.entries(metafile.outputs)) {
    for (const { path: spec, external } of output.imports) {
      if (external && spec.startsWith('.') && !existsSync(resolve(root, dirname(file), spec))) {
        throw new Error(`${file} imports ${spec}, which the bundle does not contain`);
      }
    }
  }
  return metafile;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  try {
    const metafile = await bundleCli();
    const files = Object.entries(metafile.outputs).filter(([f]) => f.endsWith('.js'));
    const bytes = files.reduce((n, [, o]) => n + o.bytes, 0);
    console.log(`bundle: ${files.length} files, ${(bytes / 1024).toFixed(0)} KiB in dist/cli.bundle.js, dist/bundle/ and dist/${HEADLESS_DIR}/`);
  } catch (err) {
    console.error(err instanceof Error ? err.message : err);
    process.exit(1);
  }
}
