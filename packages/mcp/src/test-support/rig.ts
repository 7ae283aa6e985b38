// The MCP client in the real runtime: a LocalSystem with a scripted model, a real sandbox session
// over a temp repository, and real MCP servers (the SDK's server API). The brain is the only
// stand-in: it calls what the test says and records what it read back.
import { execFile } from 'node:child_process';
import { mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import {
  LocalSystem,
  MemoryStore,
  ScriptedProvider,
  type CompletionRequest,
  type RuntimeEvent,
  type ScriptedReply,
  type ToolDefinition,
} from '@infinity-code/runtime';
import { openSession, type BackendName, type Sandbox, type SandboxSession } from '@infinity-code/sandbox';
import type { McpServerConfig, McpServerEntry, McpSourceKind } from '../config.js';
import { startMcpServers, type McpServers, type StartMcpOptions } from '../manager.js';
import { STDIO_FIXTURE } from '../testing/index.js';
import { trustOf } from '../trust.js';

const run = promisify(execFile);
const FAST_RETRY = { baseDelayMs: 1, maxDelayMs: 5, initTimeoutMs: 5_000, stallTimeoutMs: 5_000 };

/** What the model read back from one call. */
export interface Read {
  name: string;
  text: string;
  isError: boolean;
  images: number;
}

export interface RigOptions extends Partial<Omit<StartMcpOptions, 'servers' | 'sandbox' | 'addTools'>> {
  servers: McpServerEntry[];
  /** The sandbox backend (the one openSession picks by default). */
  backend?: BackendName;
}

export function stdioServer(name: string, extra: Partial<Extract<McpServerConfig, { type: 'stdio' }>> = {}, source: McpSourceKind = 'user-config'): McpServerEntry {
  return {
    name,
    source,
    file: source === 'mcp-json' ? '.mcp.json' : 'config.json',
    config: { type: 'stdio', command: process.execPath, args: [STDIO_FIXTURE], env: {}, ...extra },
  };
}

export function httpServer(name: string, url: string, headers: Record<string, string> = {}): McpServerEntry {
  return { name, source: 'user-config', file: 'config.json', config: { type: 'http', url, headers } };
}

export class Rig {
  readonly events: RuntimeEvent[] = [];
  /** Every call's result the model read, in order. */
  readonly reads: Read[] = [];
  /** The tools of each request. */
  readonly offered: ToolDefinition[][] = [];
  private readonly dirs: string[];

  private constructor(
    readonly repo: string,
    readonly session: SandboxSession,
    readonly root: Sandbox,
    readonly system: LocalSystem,
    readonly mcp: McpServers,
    dirs: string[],
  ) {
    this.dirs = dirs;
  }

  static async start({ servers, backend, ...rest }: RigOptions): Promise<Rig> {
    const tmp = async (prefix: string) => realpath(await mkdtemp(path.join(os.tmpdir(), prefix)));
    const repo = await tmp('ic-mcp-repo-');
    const state = await tmp('ic-mcp-state-');
    const git = (...args: string[]) => run('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', ...args], { cwd: repo });
    await git('init', '-q', '-b', 'main');
    await writeFile(path.join(repo, 'README.md'), 'fixture\n');
    await git('add', '-A');
    await git('commit', '-qm', 'initial');
    const session = await openSession({ repo, stateDir: state, ...(backend ? { backend } : {}) });
    const root = await session.create('root');
    // The brain is the rig's: it is made below, once the system it drives exists.
    const ref: { rig?: Rig } = {};
    const system = new LocalSystem({
      store: new MemoryStore(),
      model: 'scripted',
      retry: FAST_RETRY,
      provider: new ScriptedProvider((r) => ref.rig!.think(r)),
    });
    const mcp = startMcpServers({
      servers,
      trust: (e) => trustOf(e, undefined),
      ...rest,
      sandbox: async () => root,
      addTools: (tools) => system.addTools(tools),
    });
    const rig = new Rig(repo, session, root, system, mcp, [repo, state]);
    ref.rig = rig;
    system.subscribe((e) => rig.events.push(e));
    await system.start();
    return rig;
  }

  /** Has the model call these tools (in one reply) on `thread`; resolves with what it read once it is idle. */
  async call(calls: Array<{ name: string; input?: Record<string, unknown> }>, thread = 't1'): Promise<Read[]> {
    const before = this.reads.length;
    const read = this.untilReads(before + calls.length);
    await this.system.sendUserText(thread, JSON.stringify({ calls }));
    await read;
    // Other threads' calls may still run: only this one's round must be over.
    await this.system.whenIdle({ ignoreRunningTools: true });
    return this.reads.slice(before, before + calls.length);
  }

  private readWaiters: Array<{ count: number; resolve: () => void }> = [];

  private untilReads(count: number): Promise<void> {
    if (count === 0 || this.reads.length >= count) return Promise.resolve();
    return new Promise((resolve) => this.readWaiters.push({ count, resolve }));
  }

  async close(): Promise<void> {
    await this.mcp.close();
    await this.system.close();
    await this.session.close();
    for (const d of this.dirs) await rm(d, { recursive: true, force: true });
  }

  /** The model: calls what the user message lists; reads the results and says so. */
  private think(r: CompletionRequest): ScriptedReply {
    this.offered.push([...r.tools]);
    const last = r.messages.at(-1)!;
    const results = last.content.filter((b) => b.type === 'tool_result');
    if (results.length > 0) {
      const previous = r.messages.at(-2)!.content.flatMap((b) => (b.type === 'tool_use' ? [b] : []));
      for (const res of results) {
        if (res.type !== 'tool_result') continue;
        this.reads.push({
          name: previous.find((u) => u.id === res.tool_use_id)?.name ?? '?',
          text: res.content.flatMap((c) => (c.type === 'text' ? [c.text] : [])).join('\n'),
          isError: res.is_error === true,
          images: res.content.filter((c) => c.type === 'image').length,
        });
      }
      this.readWaiters = this.readWaiters.filter((w) => (this.reads.length >= w.count ? (w.resolve(), false) : true));
      return { text: 'Read the results.' };
    }
    const block = last.content.find((b) => b.type === 'text');
    const { calls } = JSON.parse(block?.type === 'text' ? block.text : '{}') as { calls?: Array<{ name: string; input?: Record<string, unknown> }> };
    if (!calls || calls.length === 0) return { text: 'Nothing to do.' };
    return { toolCalls: calls.map((c) => ({ name: c.name, input: c.input ?? {} })) };
  }
}
