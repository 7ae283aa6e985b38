// `pnpm release:pack`: the installable `infinity-code` tarball (`npm install -g ./infinity-code-<v>.tgz`).
//
// The workspace's own package.json can't be packed as it is: it is private, its workspace packages
// are `workspace:*` ranges that npm can't install and that aren't published anywhere, and its bin
// runs tsc's output module by module. So the package is assembled in a staging directory instead:
// - dist/cli.bundle.js, dist/bundle/ and dist/headless/: the CLI bundled like `pnpm build` does
//   (scripts/bundle.mjs), the workspace packages bundled in as well;
// - dist/main.js: the launcher tsc builds from src/main.ts (it picks the bundle, there being no
//   TypeScript build next to it);
// - package.json: written here, its dependencies the modules the bundle leaves out (@vscode/ripgrep:
//   see bundle.mjs) with the ranges the workspace declares for them, and better-sqlite3, whose
//   JavaScript is bundled but whose addon is not, at the version bundled;
// - THIRD-PARTY-NOTICES.txt: the licences of the bundled packages, which their licences require
//   a copy to carry;
// - README.md: the user's manual (usage, exit codes, configuration).
// then packed with `npm pack`. Runs `tsc -b` first and bundles its output; besides what tsc writes
// (nothing after `pnpm build`) it writes nothing in the workspace but the tarball, so it may run
// while tests use dist/.
//
// Usage: node scripts/pack.mjs [--pack-destination <dir>]   (default: the current directory)
// Progress goes to stderr; stdout is the tarball's absolute path alone, so that
// `tgz=$(pnpm -s release:pack)` works.
import { execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire, isBuiltin } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { bundleCli, NATIVE_ADDONS, REQUIRED_AT_RUN_TIME, UNBUNDLED } from './bundle.mjs';

const cliRoot = fileURLToPath(new URL('..', import.meta.url));
const repoRoot = path.resolve(cliRoot, '../..');

/**
 * Modules the bundle may import that are not installed with it, each guarded where it is used:
 * Ink's devtools load only with DEV=true, and ws (Ink's devtools connection) only tries its
 * optional native accelerators.
 */
const OPTIONAL = new Set(['react-devtools-core', 'bufferutil', 'utf-8-validate']);

const { values: opts } = parseArgs({ options: { 'pack-destination': { type: 'string' } } });
const destination = path.resolve(opts['pack-destination'] ?? '.');

const readJson = (file) => JSON.parse(readFileSync(file, 'utf8'));
const log = (line) => process.stderr.write(`${line}\n`);

/** A reason to stop that needs no stack trace: printed alone (after the staging dir is removed). */
class PackError extends Error {}
function fail(message) {
  throw new PackError(message);
}

/** The package a module path lies in: its name and directory (the last node_modules/<name> in it). */
function packageOf(file) {
  const parts = file.split(/[\\/]/);
  const at = parts.lastIndexOf('node_modules');
  if (at < 0) return undefined;
  const name = parts[at + 1]?.startsWith('@') ? `${parts[at + 1]}/${parts[at + 2]}` : parts[at + 1];
  return { name, dir: parts.slice(0, at + 1 + name.split('/').length).join('/') };
}

/** The licence texts of the bundled third-party packages, one after another. */
function thirdPartyNotices(metafile) {
  // By name and version: a package may be bundled in more than one version.
  const packages = new Map();
  for (const input of Object.keys(metafile.inputs)) {
    const pkg = packageOf(input);
    if (pkg === undefined) continue;
    const dir = path.resolve(cliRoot, pkg.dir);
    const { version, license } = readJson(path.join(dir, 'package.json'));
    packages.set(`${pkg.name}@${version}`, { dir, license });
  }
  const sections = [...packages].sort(([a], [b]) => a.localeCompare(b)).map(([id, { dir, license }]) => {
    const files = readdirSync(dir).filter((f) => /^(licen[cs]e|copying|notice)/i.test(f)).sort();
    const texts = files.map((f) => readFileSync(path.join(dir, f), 'utf8').trim());
    const body = texts.length > 0 ? texts.join('\n\n') : `(no licence file in the package; its package.json says: ${license ?? 'nothing'})`;
    return `${id} (${license ?? 'no licence field'})\n\n${body}\n`;
  });
  return `infinity-code bundles the following packages (dist/cli.bundle.js, dist/bundle/, dist/headless/).\n\n${sections.join(`\n${'-'.repeat(78)}\n\n`)}`;
}

async function main() {
  // The TypeScript build (incremental: nothing to do after `pnpm build`), its output on stderr
  // like all progress here.
  const tsc = createRequire(path.join(repoRoot, 'package.json')).resolve('typescript/bin/tsc');
  try {
    execFileSync(process.execPath, [tsc, '-b'], { cwd: repoRoot, stdio: ['ignore', 2, 2] });
  } catch {
    fail('the TypeScript build (tsc -b) failed; see above.');
  }

  const cliPkg = readJson(path.join(cliRoot, 'package.json'));
  const rootPkg = readJson(path.join(repoRoot, 'package.json'));
  /** The range each workspace package declares for a dependency: the published one uses the same. */
  const declaredRanges = new Map();
  for (const dir of ['packages/cli', ...readdirSync(path.join(repoRoot, 'packages')).map((d) => `packages/${d}`)]) {
    const file = path.join(repoRoot, dir, 'package.json');
    if (!existsSync(file)) continue;
    for (const [name, range] of Object.entries(readJson(file).dependencies ?? {})) {
      if (String(range).startsWith('workspace:')) continue;
      const seen = declaredRanges.get(name);
      if (seen !== undefined && seen.range !== range) {
        fail(`${name} has two ranges (${seen.dir}: ${seen.range}, ${dir}: ${range}); make them agree.`);
      }
      declaredRanges.set(name, { range, dir });
    }
  }

  const staging = mkdtempSync(path.join(tmpdir(), 'infinity-code-pack-'));
  try {
    const metafile = await bundleCli({ outdir: path.join(staging, 'dist'), inlineWorkspace: true, sourcemap: false });

    // Every bare import the bundle left out must be installed with it, or be one of the optional ones.
    const dependencies = {};
    for (const output of Object.values(metafile.outputs)) {
      for (const { path: spec, external } of output.imports) {
        // A relative path leads from one of the bundle's builds to the other (bundle.mjs checks it).
        if (!external || isBuiltin(spec) || spec.startsWith('.')) continue;
        const name = spec.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : spec.split('/')[0];
        if (OPTIONAL.has(name)) continue;
        if (!UNBUNDLED.includes(name)) fail(`the bundle imports ${spec}, which it neither contains nor lists as a dependency.`);
        const declared = declaredRanges.get(name);
        if (declared === undefined) fail(`the bundle imports ${name}, which no workspace package declares.`);
        dependencies[name] = declared.range;
      }
    }
    // Loaded with require() where they are used (see bundle.mjs), which the bundler does not see.
    for (const name of REQUIRED_AT_RUN_TIME) {
      const declared = declaredRanges.get(name);
      if (declared === undefined) fail(`the bundle requires ${name}, which no workspace package declares.`);
      dependencies[name] = declared.range;
    }
    // Bundled, but their compiled addons are loaded from their install: the very version bundled.
    for (const name of NATIVE_ADDONS) {
      const dir = Object.keys(metafile.inputs)
        .map((input) => packageOf(path.resolve(cliRoot, input)))
        .find((p) => p?.name === name)?.dir;
      if (dir === undefined) fail(`the bundle no longer contains ${name}; update bundle.mjs's NATIVE_ADDONS.`);
      dependencies[name] = readJson(path.join(dir, 'package.json')).version;
    }

    // The launcher without its source-map comment: the map is not shipped.
    const launcher = readFileSync(path.join(cliRoot, 'dist/main.js'), 'utf8').replace(/\n\/\/# sourceMappingURL=\S+\s*$/, '\n');
    writeFileSync(path.join(staging, 'dist/main.js'), launcher, { mode: 0o755 });
    writeFileSync(path.join(staging, 'THIRD-PARTY-NOTICES.txt'), thirdPartyNotices(metafile));
    copyFileSync(path.join(repoRoot, 'README.md'), path.join(staging, 'README.md'));

    const manifest = {
      name: cliPkg.name,
      version: cliPkg.version,
      description: 'A terminal coding agent on a time-sliced agent runtime',
      type: 'module',
      bin: { 'infinity-code': 'dist/main.js' },
      // What runs, nothing else (npm adds package.json and README.md itself).
      files: ['dist/main.js', 'dist/cli.bundle.js', 'dist/bundle/', 'dist/headless/', 'THIRD-PARTY-NOTICES.txt'],
      engines: rootPkg.engines,
      dependencies: Object.fromEntries(Object.entries(dependencies).sort(([a], [b]) => a.localeCompare(b))),
    };
    if (manifest.engines?.node === undefined) fail('the root package.json has no engines.node to publish.');
    writeFileSync(path.join(staging, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`);

    mkdirSync(destination, { recursive: true });
    // --ignore-scripts: the staged package has none, and a user's npm config must not add any.
    // Without pnpm's npm_config_* variables (`pnpm release:pack` exports its own settings that way),
    // which npm warns are unknown to it; packing a directory reads no configuration anyway.
    const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^npm_config_/i.test(k)));
    const out = execFileSync('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', destination], {
      cwd: staging,
      env,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const [packed] = JSON.parse(out);
    const tarball = path.join(destination, packed.filename);
    const kib = (n) => `${(n / 1024).toFixed(0)} KiB`;
    log(`${packed.filename}: ${packed.entryCount} files, ${kib(packed.size)} packed, ${kib(packed.unpackedSize)} unpacked`);
    log(`dependencies: ${Object.entries(manifest.dependencies).map(([n, r]) => `${n}@${r}`).join(', ')}`);
    const shown = path.relative(process.cwd(), tarball).startsWith('..') ? tarball : `./${path.relative(process.cwd(), tarball)}`;
    log(`install it with: npm install -g --allow-scripts=better-sqlite3 ${shown}`);
    process.stdout.write(`${tarball}\n`);
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
}

try {
  await main();
} catch (err) {
  if (!(err instanceof PackError)) throw err;
  log(`release:pack: ${err.message}`);
  process.exitCode = 1;
}
