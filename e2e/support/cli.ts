import { execFileSync, spawn } from 'node:child_process';
import { closeSync, existsSync, mkdtempSync, mkdirSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FakeBrain, FakeReply } from '@infinity-code/runtime/testing';
import type { ScriptedReply } from '@infinity-code/runtime';
import { invalidStreamJsonLines } from './stream-json-schema.js';

export const BIN = fileURLToPath(new URL('../../packages/cli/dist/main.js', import.meta.url));

export interface CliRun {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

export interface Started {
  pid: number;
  /** Resolves when the process has exited. */
  done: Promise<CliRun>;
  kill(signal: NodeJS.Signals): void;
}

export interface StartOptions {
  cwd: string;
  env?: Record<string, string>;
  home?: string;
  onStdout?: (all: string) => void;
  /** Called with all of stderr so far, each time more arrives (headless progress). */
  onStderr?: (all: string) => void;
  /** A file to connect to stdin (otherwise /dev/null). */
  stdinFile?: string;
  /** argv run in front of `node main.js` (e.g. GNU time). */
  wrapper?: string[];
  /** A program to run instead of the workspace's build (`node main.js`), e.g. an installed `infinity-code`. */
  program?: string;
  /** Node's own options, between `node` and `main.js` (e.g. `--import` a loader hook). */
  nodeArgs?: string[];
  /**
   * Descriptors of ours the CLI gets open at these numbers, without close-on-exec, as a shell's
   * `20</some/dir` leaves them (its number → ours).
   */
  inherit?: Record<number, number>;
}

/**
 * Adds `name` to `sandbox.envAllow` in the user config of `env`'s home (made when missing):
 * commands get only an allowlisted environment, and the demo's test.js reads its step count
 * (DEMO_TEST_STEPS) from its own.
 */
function letCommandsSee(env: NodeJS.ProcessEnv, name: string): void {
  const dir = join(env.XDG_CONFIG_HOME ?? join(env.HOME!, '.config'), 'infinity-code');
  const file = join(dir, 'config.json');
  mkdirSync(dir, { recursive: true });
  const config = (existsSync(file) ? JSON.parse(readFileSync(file, 'utf8')) : {}) as { sandbox?: { envAllow?: string[] } };
  const allow = config.sandbox?.envAllow ?? [];
  if (allow.includes(name)) return;
  writeFileSync(file, JSON.stringify({ ...config, sandbox: { ...config.sandbox, envAllow: [...allow, name] } }));
}

/** Starts the built CLI with a clean environment (no real key leaks in) plus `env`. */
export function startCli(args: string[], opts: StartOptions): Started {
  // A home of its own: config and sandbox state never come from (or go to) the real one.
  const env: NodeJS.ProcessEnv = { PATH: process.env.PATH, HOME: opts.home ?? tempDir(), NO_COLOR: '1', ...opts.env };
  if (env.DEMO_TEST_STEPS !== undefined) letCommandsSee(env, 'DEMO_TEST_STEPS');
  const stdinFd = opts.stdinFile === undefined ? 'ignore' : openSync(opts.stdinFile, 'r');
  const node = [process.execPath, ...(opts.nodeArgs ?? []), BIN];
  const argv = [...(opts.wrapper ?? []), ...(opts.program === undefined ? node : [opts.program]), ...args];
  const stdio: Array<number | 'pipe' | 'ignore'> = [stdinFd, 'pipe', 'pipe'];
  for (const [at, fd] of Object.entries(opts.inherit ?? {})) {
    while (stdio.length < Number(at)) stdio.push('ignore');
    stdio[Number(at)] = fd;
  }
  const child = spawn(argv[0], argv.slice(1), { cwd: opts.cwd, env, stdio });
  if (typeof stdinFd === 'number') closeSync(stdinFd);
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (d: Buffer) => {
    stdout += d.toString();
    opts.onStdout?.(stdout);
  });
  child.stderr!.on('data', (d: Buffer) => {
    stderr += d.toString();
    opts.onStderr?.(stderr);
  });
  // json's one object is the result line's shape: checked against the same schema.
  const jsonOutput = args.some((a, i) => a === 'stream-json' || (a === 'json' && args[i - 1] === '--output-format') || a === '--output-format=json');
  const done = new Promise<CliRun>((resolve, reject) =>
    child.on('close', (code, signal) => {
      const bad = jsonOutput ? invalidStreamJsonLines(stdout) : [];
      if (bad.length > 0) reject(new Error(`stream-json lines that do not match docs/stream-json.schema.json:\n${bad.join('\n')}`));
      else resolve({ code, signal, stdout, stderr });
    }),
  );
  return { pid: child.pid!, done, kill: (s) => child.kill(s) };
}

export function runCli(args: string[], opts: StartOptions): Promise<CliRun> {
  return startCli(args, opts).done;
}

const temps: string[] = [];
export function cleanupTemps(): void {
  // Retried: a CLI that was just killed may still be writing its sandbox state there (ENOTEMPTY).
  for (const d of temps.splice(0)) rmSync(d, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
}

/** A temp git repository holding `files`, committed, with a project config. */
export function gitRepo(files: Record<string, string | Uint8Array>, config: Record<string, unknown> = {}): string {
  const dir = mkdtempSync(join(tmpdir(), 'ic-e2e-'));
  temps.push(dir);
  for (const [name, content] of Object.entries(files)) {
    mkdirSync(join(dir, name, '..'), { recursive: true });
    writeFileSync(join(dir, name), content);
  }
  git(dir, 'init', '-q');
  git(dir, 'add', '-A');
  git(dir, 'commit', '-qm', 'initial');
  if (Object.keys(config).length > 0) {
    mkdirSync(join(dir, '.infinity'), { recursive: true });
    writeFileSync(join(dir, '.infinity', 'config.json'), JSON.stringify(config));
  }
  return dir;
}

export function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'ic-e2e-'));
  temps.push(dir);
  return dir;
}

/** A loopback URL where nothing listens: a port the system handed out, then closed again. */
export async function closedLoopbackUrl(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `http://127.0.0.1:${port}`;
}

export function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', ['-c', 'user.email=t@t', '-c', 'user.name=t', ...args], { cwd, encoding: 'utf8' });
}

/** A scripted brain's reply, as the fake Messages API streams it. */
export function asFake(reply: ScriptedReply): FakeReply {
  const out: FakeReply = { chunks: 3 };
  if (reply.text) out.text = reply.text;
  if (reply.toolCall) out.toolUse = { name: reply.toolCall.name, input: reply.toolCall.input };
  return out;
}

/** Drives the fake API with a brain written against Messages-shaped requests. */
export function fakeBrain(brain: (r: { system: unknown; messages: never[] }) => ScriptedReply): FakeBrain {
  return (body) => asFake(brain({ system: body.system, messages: (body.messages ?? []) as never[] }));
}
