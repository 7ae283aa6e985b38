// Instruction files of subdirectories, delivered with a thread's first file tool call under each:
// through the real runtime and real sandboxes (the fixture repository's CLAUDE.local.md is
// git-ignored, so the sandbox never has it and it comes from the working tree).
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Sandbox } from '@infinity-code/sandbox';
import type { CodingToolsSetup } from './coding-tools.js';
import { dirsOf, ShownDirs } from './nested-instructions.js';
import { storedResultDisplay } from './result-display.js';
import { ToolAgent, type AgentOptions } from './test-support/agent.js';
import { backendsUnderTest, Fixtures } from './test-support/fixtures.js';

const backends = await backendsUnderTest();
const INTRO = 'Instructions for the directories this call reached';
const block = (file: string) => `<instructions from="${file}" applies-to="${path.posix.dirname(file)}/">`;

describe.each(backends)('nested instructions (%s backend)', { timeout: 30_000 }, (backend) => {
  const fx = new Fixtures();
  let repo: string;
  let outside: string;
  let sb: Sandbox;
  let agent: ToolAgent;
  let n = 0;
  const thread = () => `t-${++n}`;

  beforeAll(async () => {
    outside = await fx.tempDir('ic-nested-outside-');
    await writeFile(path.join(outside, 'secret.md'), 'OUTSIDE SECRET');
    repo = await fx.repo({
      '.gitignore': 'CLAUDE.local.md\n.env\n',
      // A CLAUDE.local.md the repository commits: in the sandbox, and the repository's.
      'src/shared/.gitignore': '!CLAUDE.local.md\n',
      'src/shared/CLAUDE.local.md': 'SHARED LOCAL @../../.env',
      'src/shared/a.ts': 'a\n',
      'AGENTS.md': 'ROOT RULES',
      'README.md': 'README TEXT',
      'src/api/AGENTS.md': 'API RULES. Follow @docs/style.md.\n```\n@docs/fenced.md\n```\nNot `@docs/span.md`; not @docs/missing.md.',
      'src/api/CLAUDE.md': 'API CLAUDE (AGENTS.md wins)',
      'src/api/docs/style.md': 'STYLE, and @../../../README.md',
      'src/api/docs/fenced.md': 'FENCED',
      'src/api/docs/span.md': 'SPAN',
      'src/api/handler.ts': 'export const handler = 1;\n',
      'src/api/v2/CLAUDE.md': 'V2 RULES',
      'src/api/v2/route.ts': 'export const route = 2;\n',
      'src/lib/util.ts': 'export const util = 3;\n',
      'src/ui/view.ts': 'export const view = 4;\n',
      'src/evil/AGENTS.md': 'EVIL @~/secret.md @../../../secret.md @link-out.md @../../.git/config',
      'src/evil/link-out.md': { symlink: path.join(outside, 'secret.md') },
      'src/evil/x.ts': 'x\n',
      'node_modules/pkg/AGENTS.md': 'PACKAGE RULES',
      'node_modules/pkg/index.js': 'module.exports = 1;\n',
    });
    // The user's own notes: ignored, so only in the working tree.
    await writeFile(path.join(repo, 'src/ui/CLAUDE.local.md'), 'MY UI NOTES @notes-more.md');
    await writeFile(path.join(repo, 'src/ui/notes-more.md'), 'MORE OF MY NOTES');
    await writeFile(path.join(repo, 'src/ui/.gitignore'), 'notes-more.md\n');
    await writeFile(path.join(repo, '.env'), 'API_KEY=SECRET');
    const session = await fx.session(repo, backend);
    sb = await session.create('nested');
    // Options the test harness passes through to codingTools as they are.
    const opts: AgentOptions & CodingToolsSetup = { sandboxFor: async () => sb, repoRoot: repo, nestedInstructions: true };
    agent = new ToolAgent(opts);
  });
  afterAll(async () => {
    await agent.close();
    await fx.cleanup();
  });

  it("appends a directory's instructions, with their imports, to a thread's first call there, once", async () => {
    const t = thread();
    const first = await agent.call('read_file', { path: 'src/api/handler.ts' }, t);
    expect(first.isError).toBe(false);
    // After the tool's own result.
    expect(first.text).toMatch(/^<file name="src\/api\/handler\.ts"[\s\S]*export const handler = 1;\n<\/file>\n\nInstructions for/);
    expect(first.text).toContain(
      `${block('src/api/AGENTS.md')}\nAPI RULES. Follow @docs/style.md.\n\`\`\`\n@docs/fenced.md\n\`\`\`\nNot \`@docs/span.md\`; not @docs/missing.md.\n\n` +
        '<imported file="src/api/docs/style.md">\nSTYLE, and @../../../README.md\n\n<imported file="README.md">\nREADME TEXT\n</imported>\n</imported>\n</instructions>',
    );
    for (const absent of ['ROOT RULES', 'API CLAUDE', 'FENCED', 'SPAN']) expect(first.text).not.toContain(absent);
    // Read back as stored, the result still gives UIs the read's own line, not the instructions.
    expect(storedResultDisplay({ name: 'read_file' }, first)).toEqual(first.display);

    // Deeper: only what the thread was not shown yet.
    const deeper = await agent.call('read_file', { path: 'src/api/v2/route.ts' }, t);
    expect(deeper.text).toContain(`${block('src/api/v2/CLAUDE.md')}\nV2 RULES\n</instructions>`);
    expect(deeper.text).not.toContain('API RULES');
    const again = await agent.call('read_file', { path: 'src/api/handler.ts' }, t);
    expect(again.text).not.toContain(INTRO);

    // Another thread is shown them too.
    const other = await agent.call('read_file', { path: 'src/api/v2/route.ts' }, thread());
    expect(other.text.indexOf('API RULES')).toBeLessThan(other.text.indexOf('V2 RULES'));
  });

  it('counts edits, new files and listings, and reads what the sandbox holds', async () => {
    const edited = await agent.call('edit_file', { path: 'src/api/v2/route.ts', old_str: '2', new_str: '22' }, thread());
    expect(edited.isError).toBe(false);
    expect(edited.text).toContain('V2 RULES');

    // The thread's own version of the instructions.
    await sb.writeFile('src/lib/AGENTS.md', 'LIB RULES FROM THE SANDBOX');
    const created = await agent.call('create_file', { path: 'src/lib/more/new.ts', content: 'new\n' }, thread());
    expect(created.isError).toBe(false);
    expect(created.text).toContain(`${block('src/lib/AGENTS.md')}\nLIB RULES FROM THE SANDBOX\n</instructions>`);

    // A listed directory is worked in, its instructions included.
    const listed = await agent.call('list_files', { path: 'src/api/v2' }, thread());
    expect(listed.text).toContain('V2 RULES');
    expect(listed.text).toContain('API RULES');
  });

  it("CLAUDE.local.md, never in a sandbox, comes from the user's working tree with what it imports", async () => {
    expect(await sb.exists('src/ui/CLAUDE.local.md')).toBe(false);
    const r = await agent.call('read_file', { path: 'src/ui/view.ts' }, thread());
    expect(r.text).toContain(`${block('src/ui/CLAUDE.local.md')}\nMY UI NOTES @notes-more.md\n\n<imported file="src/ui/notes-more.md">\nMORE OF MY NOTES\n</imported>\n</instructions>`);
  });

  it("an instruction file of the repository's never brings an ignored file of the user's", async () => {
    const r = await agent.call('read_file', { path: 'src/shared/a.ts' }, thread());
    expect(r.text).toContain(`${block('src/shared/CLAUDE.local.md')}\nSHARED LOCAL @../../.env\n</instructions>`);
    expect(r.text).not.toContain('SECRET');
  });

  it('a failed call shows nothing and marks nothing; reading an instruction file does not repeat it', async () => {
    const t = thread();
    const failed = await agent.call('read_file', { path: 'src/api/missing.ts' }, t);
    expect(failed.isError).toBe(true);
    expect(failed.text).not.toContain(INTRO);
    const read = await agent.call('read_file', { path: 'src/api/AGENTS.md' }, t);
    expect(read.text).toContain('API RULES');
    expect(read.text).not.toContain(block('src/api/AGENTS.md'));
    expect(read.text).not.toContain('API CLAUDE');
    // Its imports came with nothing: the file was read, not delivered. The directory counts as shown.
    expect((await agent.call('read_file', { path: 'src/api/handler.ts' }, t)).text).not.toContain(INTRO);
  });

  it('reads nothing outside the repository, and nothing of installed packages', async () => {
    const evil = await agent.call('read_file', { path: 'src/evil/x.ts' }, thread());
    expect(evil.text).toContain('EVIL @~/secret.md @../../../secret.md @link-out.md @../../.git/config\n</instructions>');
    expect(evil.text).not.toContain('OUTSIDE SECRET');
    expect(evil.text).not.toContain('<imported');
    const pkg = await agent.call('read_file', { path: 'node_modules/pkg/index.js' }, thread());
    expect(pkg.isError).toBe(false);
    expect(pkg.text).not.toContain('PACKAGE RULES');
  });

  it('is off unless asked for', async () => {
    const plain = new ToolAgent({ sandboxFor: async () => sb, repoRoot: repo });
    try {
      const r = await plain.call('read_file', { path: 'src/api/handler.ts' });
      expect(r.isError).toBe(false);
      expect(r.text).not.toContain(INTRO);
    } finally {
      await plain.close();
    }
  });
});

describe('what a thread was shown', () => {
  it('stays bounded: the least recently active thread and the oldest directory go first', () => {
    const shown = new ShownDirs(2, 3);
    const at = (id: string) => ({ id, contextTokens: 0 });
    expect(shown.take(at('a'), ['x', 'x/y'])).toEqual(['x', 'x/y']);
    expect(shown.take(at('a'), ['x', 'x/y', 'z'])).toEqual(['z']);
    // A fourth directory pushes out the first.
    expect(shown.take(at('a'), ['w'])).toEqual(['w']);
    expect(shown.take(at('a'), ['x'])).toEqual(['x']);
    shown.take(at('b'), ['x']);
    shown.take(at('a'), []);
    shown.take(at('c'), ['x']);
    expect(shown.size.threads).toBe(2);
    // b was the least recently active: forgotten, it is shown again.
    expect(shown.take(at('b'), ['x'])).toEqual(['x']);
    expect(shown.size.dirs).toBeLessThanOrEqual(2 * 3);
  });

  it('forgets a thread whose context shrank (its history was compacted)', () => {
    const shown = new ShownDirs();
    expect(shown.take({ id: 'a', contextTokens: 5_000 }, ['x'])).toEqual(['x']);
    expect(shown.take({ id: 'a', contextTokens: 9_000 }, ['x'])).toEqual([]);
    expect(shown.take({ id: 'a', contextTokens: 1_200 }, ['x'])).toEqual(['x']);
  });

  it('never looks into .git or node_modules', () => {
    expect(dirsOf('')).toEqual([]);
    expect(dirsOf('a/b/c')).toEqual(['a', 'a/b', 'a/b/c']);
    expect(dirsOf('a/node_modules/p/lib')).toEqual(['a']);
    expect(dirsOf('.git/hooks')).toEqual([]);
  });
});
