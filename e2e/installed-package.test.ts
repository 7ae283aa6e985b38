// The installable package: `pnpm release:pack` writes a tarball that `npm install -g` installs as a
// working `infinity-code` command, run here from a repository outside the checkout with nothing of
// the workspace within reach.
import { execFile } from 'node:child_process';
import { existsSync, readFileSync, realpathSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { startFakeMessagesApi, type FakeMessagesApi } from '@infinity-code/runtime/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanupTemps, fakeBrain, gitRepo, runCli, tempDir } from './support/cli.js';
import { lastResult, toolCalls } from './support/model.js';

const run = promisify(execFile);
const repoRoot = fileURLToPath(new URL('..', import.meta.url));
const cliVersion = (JSON.parse(readFileSync(join(repoRoot, 'packages/cli/package.json'), 'utf8')) as { version: string }).version;

/**
 * The environment npm installs with: this one without the npm_config_* variables pnpm exports to
 * the scripts it runs (a user's shell has none; npm warns about those it doesn't know), except the
 * node-gyp headers location `.ci/run` sets (needed if better-sqlite3 is compiled, see below).
 */
function npmEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^npm_config_/i.test(k) || /^npm_config_nodedir$/i.test(k)));
  return { ...env, ...extra };
}

/**
 * better-sqlite3's install script (`prebuild-install || node-gyp rebuild`) downloads a prebuilt
 * binary from GitHub on a user's machine; CI reaches only the npm registry, where it would compile
 * SQLite instead (about two minutes of both cores, slowing every test that runs alongside). So the
 * binary the workspace's install built for this Node is offered the way prebuild-install takes a
 * local prebuild (`npm_config_<package>_local_prebuilds`: a directory of the archives it would
 * download, under the same names). It applies only when npm resolves the same version the
 * workspace has; another version is compiled from source, as on a machine without GitHub.
 */
async function localPrebuilds(dir: string): Promise<Record<string, string>> {
  const { pkgDir, version } = workspaceSqlite();
  const binding = 'build/Release/better_sqlite3.node';
  if (!existsSync(join(pkgDir, binding))) return {};
  const name = `better-sqlite3-v${version}-node-v${process.versions.modules}-${process.platform}-${process.arch}.tar.gz`;
  await run('tar', ['czf', join(dir, name), '-C', pkgDir, binding]);
  return { npm_config_better_sqlite3_local_prebuilds: dir };
}

/** The better-sqlite3 the workspace has (the runtime's): the one the CLI's bundle carries. */
function workspaceSqlite(): { pkgDir: string; version: string } {
  const fromRuntime = createRequire(join(repoRoot, 'packages/runtime/package.json'));
  const pkgDir = resolve(realpathSync(fromRuntime.resolve('better-sqlite3/package.json')), '..');
  const { version } = JSON.parse(readFileSync(join(pkgDir, 'package.json'), 'utf8')) as { version: string };
  return { pkgDir, version };
}

let api: FakeMessagesApi;
beforeAll(async () => {
  // Grep for the greeting, fix it, run the test in the sandbox, answer; any failed step is the answer.
  api = await startFakeMessagesApi({
    brain: fakeBrain(({ messages }) => {
      const last = lastResult(messages);
      if (last?.isError) return { text: `Failed: ${last.name}: ${last.text}` };
      switch (toolCalls(messages).length) {
        case 0:
          return { text: 'Looking for the greeting.', toolCall: { name: 'grep', input: { pattern: 'hi there' } } };
        case 1:
          if (!last!.text.includes('greet.js')) return { text: `grep did not find greet.js: ${last!.text}` };
          return { toolCall: { name: 'edit_file', input: { path: 'greet.js', old_str: "'hi there'", new_str: "'Hello there'" } } };
        case 2:
          return { toolCall: { name: 'execute_command', input: { command: 'node test.js' } } };
        default:
          return { text: /^ok$/m.test(last!.text) ? 'Done: the greeting is fixed and its test passes.' : `The test failed: ${last!.text}` };
      }
    }),
  });
});
afterAll(async () => {
  await api.close();
  cleanupTemps();
});

describe('the installable package', () => {
  it('pnpm release:pack, then npm install -g of the tarball: `infinity-code` runs a headless task from any directory', async () => {
    const work = tempDir();

    // Pack: the tarball's path is the last line of the output.
    const packed = await run('pnpm', ['release:pack', '--pack-destination', join(work, 'out')], { cwd: repoRoot, maxBuffer: 16 << 20 });
    const tarball = packed.stdout.trim().split('\n').at(-1)!;
    expect(tarball).toBe(join(work, 'out', `infinity-code-${cliVersion}.tgz`));
    expect(existsSync(tarball)).toBe(true);

    // Only what runs (plus the manual and the bundled packages' licences), nothing of the sources.
    const files = (await run('tar', ['tzf', tarball])).stdout.trim().split('\n').sort();
    for (const f of files) {
      expect(f).toMatch(/^package\/(package\.json|README\.md|THIRD-PARTY-NOTICES\.txt|dist\/main\.js|dist\/cli\.bundle\.js|dist\/(bundle|headless)\/[\w-]+\.js)$/);
    }
    expect(files).toEqual(expect.arrayContaining(['package/package.json', 'package/dist/main.js', 'package/dist/cli.bundle.js']));
    const manifest = JSON.parse((await run('tar', ['xzOf', tarball, 'package/package.json'])).stdout) as Record<string, unknown>;
    expect(manifest).toMatchObject({ name: 'infinity-code', version: cliVersion, bin: { 'infinity-code': 'dist/main.js' } });
    expect(manifest.private).toBeUndefined();
    expect((manifest.engines as { node: string }).node).toMatch(/^>=20/);
    const deps = manifest.dependencies as Record<string, string>;
    expect(Object.keys(deps).sort()).toEqual(['@vscode/ripgrep', 'better-sqlite3']);
    // Its JavaScript is in the bundle, its addon installed: the very version bundled.
    expect(deps['better-sqlite3']).toBe(workspaceSqlite().version);
    expect(JSON.stringify(manifest)).not.toContain('workspace:');
    expect(JSON.stringify(manifest)).not.toContain('@infinity-code/');

    // Install as a user would, into a prefix of its own, from outside the checkout. --allow-scripts:
    // npm 11 asks for better-sqlite3's install script to be approved (it still runs it otherwise).
    const prefix = join(work, 'prefix');
    const prebuilds = await localPrebuilds(work);
    await run('npm', ['install', '-g', '--prefix', prefix, '--allow-scripts=better-sqlite3', '--no-audit', '--no-fund', tarball], {
      cwd: work,
      env: npmEnv(prebuilds),
      maxBuffer: 16 << 20,
    }).catch((err: Error & { stdout?: string; stderr?: string }) => {
      throw new Error(`npm install -g failed: ${err.message}\n${err.stdout ?? ''}\n${err.stderr ?? ''}`);
    });
    expect(existsSync(join(prefix, 'bin', 'infinity-code'))).toBe(true);

    // The command by name, the installed one only: no directory of the checkout on PATH (pnpm puts
    // the workspace's node_modules/.bin there, with its own `infinity-code`).
    const PATH = [join(prefix, 'bin'), ...(process.env.PATH ?? '').split(':').filter((d) => d !== '' && !resolve(d).startsWith(repoRoot))].join(':');
    const version = await runCli(['--version'], { cwd: work, env: { PATH }, program: 'infinity-code' });
    expect(version.code, version.stderr).toBe(0);
    expect(version.stdout.trim()).toBe(cliVersion);

    // A headless task in a fresh repository: grep (the installed ripgrep), an edit, a command in the
    // sandbox, the session in SQLite (the installed better-sqlite3), the result applied with --yes.
    const repo = gitRepo({
      'greet.js': "module.exports = () => 'hi there';\n",
      'test.js': "const greet = require('./greet.js');\nif (greet() !== 'Hello there') { console.log('FAIL: ' + greet()); process.exit(1); }\nconsole.log('ok');\n",
    });
    const r = await runCli(['-p', 'Fix the greeting in greet.js', '--yes', '--output-format', 'json'], {
      cwd: repo,
      env: { PATH, ANTHROPIC_API_KEY: 'test-key', ANTHROPIC_BASE_URL: api.url },
      program: 'infinity-code',
    });
    expect(r.code, r.stderr).toBe(0);
    const result = JSON.parse(r.stdout) as { type: string; result: string; diff_applied: boolean; files_changed: string[] };
    expect(result).toMatchObject({ type: 'result', diff_applied: true, files_changed: ['greet.js'] });
    expect(result.result).toBe('Done: the greeting is fixed and its test passes.');
    expect(readFileSync(join(repo, 'greet.js'), 'utf8')).toBe("module.exports = () => 'Hello there';\n");
    expect(existsSync(join(repo, '.infinity', 'state.db'))).toBe(true);
  }, 300_000);
});
