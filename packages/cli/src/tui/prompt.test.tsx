// The prompt's conveniences over a real repository: `@path` completion and attachments, project
// commands, and pastes kept as one message.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { CompletionRequest } from '@infinity-code/runtime';
import { promptWorkspace } from '../prompt-workspace.js';
import { lastText, startRig, type Rig } from './testing.js';

let rig: Rig | undefined;
const dirs: string[] = [];
afterEach(async () => {
  await rig?.close();
  rig = undefined;
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function gitRepo(files: Record<string, string>): string {
  const root = mkdtempSync(join(tmpdir(), 'ic-prompt-ui-'));
  dirs.push(root);
  for (const [p, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, p)), { recursive: true });
    writeFileSync(join(root, p), text);
  }
  execFileSync('git', ['init', '-q'], { cwd: root });
  execFileSync('git', ['add', '-A'], { cwd: root });
  return root;
}

/** A rig whose model answers "ok" and keeps the user text of each request. */
async function rigOver(files: Record<string, string> | undefined) {
  const sent: string[] = [];
  const root = files ? gitRepo(files) : undefined;
  rig = await startRig({
    brain: (r: CompletionRequest) => {
      sent.push(lastText(r));
      return { text: 'ok' };
    },
    ...(root ? { workspace: promptWorkspace(root) } : {}),
  });
  return { rig, sent, root: root ?? '' };
}

/** The prompt box's lines (between its borders), as drawn. */
function promptBox(frame: string): string {
  const lines = frame.split('\n');
  const top = lines.findLastIndex((l) => l.startsWith('╭'));
  const bottom = lines.findLastIndex((l) => l.startsWith('╰'));
  return lines
    .slice(top + 1, bottom)
    .map((l) => l.replace(/^│ ?/, '').replace(/ *│$/, ''))
    .join('\n');
}

describe('@path mentions', () => {
  const files = {
    'src/main.ts': 'console.log("main");\n',
    'src/math/add.ts': 'export const add = (a: number, b: number) => a + b;\n',
    'README.md': '# Demo\n',
  };

  it('Tab completes a path one level at a time, listing the candidates under the prompt', async () => {
    const { rig } = await rigOver(files);
    await rig.press(...'explain @src/ma');
    await rig.press('\t');
    expect(rig.frame()).toMatch(/› explain @src\/ma[\s\S]*@src\/main\.ts {2}@src\/math\//);
    await rig.press('t', '\t');
    expect(promptBox(rig.frame())).toBe('› explain @src/math/');
    expect(rig.frame()).not.toContain('@src/main.ts');
    await rig.press('\t');
    expect(promptBox(rig.frame())).toBe('› explain @src/math/add.ts');
    // The cursor is after the completion: typing goes on there.
    await rig.press(...'please');
    expect(promptBox(rig.frame())).toBe('› explain @src/math/add.ts please');
  });

  it('completes a word and the Tab typed after it that arrive in one chunk', async () => {
    const { rig } = await rigOver(files);
    await rig.press('see @READ\t');
    expect(promptBox(rig.frame())).toBe('› see @README.md');
  });

  it("sends the mentioned file's content to the model; the transcript shows the line as typed and what was attached", async () => {
    const { rig, sent } = await rigOver(files);
    await rig.submit('what does @src/main.ts print? (see @nowhere/x.ts)');
    await rig.settle();
    expect(sent).toEqual([
      'what does @src/main.ts print? (see @nowhere/x.ts)\n\n<attached-file path="src/main.ts" lines="1">\nconsole.log("main");\n</attached-file>',
    ]);
    const f = rig.frame();
    expect(f).toMatch(/› what does @src\/main\.ts print\? \(see @nowhere\/x\.ts\)\n+ℹ attached src\/main\.ts \(1 line\)\nℹ not attached: nowhere\/x\.ts \(no such file or directory\)/);
    expect(f).not.toContain('<attached-file');
  });
});

describe('project commands', () => {
  const files = {
    '.claude/commands/review.md': '---\ndescription: Review a part of the code\nargument-hint: <part>\n---\nReview $ARGUMENTS for bugs; answer in one line.',
    '.claude/commands/broken.md': '---\ndescription: never closed\n',
    'a.txt': 'a\n',
  };

  it('are listed in /help, Tab-complete, and send their prompt with the arguments; the transcript shows the command as typed', async () => {
    const { rig, sent } = await rigOver(files);
    await rig.submit('/help');
    const help = rig.frame();
    expect(help).toMatch(/\/review <part> +Review a part of the code \(\.claude\/commands\)/);
    expect(help).toContain('.claude/commands/broken.md is left out: its frontmatter');
    await rig.press(...'/rev', '\t');
    expect(promptBox(rig.frame())).toBe('› /review');
    await rig.submit('the parser');
    await rig.settle();
    expect(sent).toEqual(['Review the parser for bugs; answer in one line.']);
    expect(rig.frame()).toMatch(/› \/review the parser\n+● ok/);
  });

  it("read their files when used: an edit counts at once, and a broken one says what is wrong", async () => {
    const { rig, sent, root } = await rigOver(files);
    await rig.submit('/broken');
    expect(rig.frame()).toContain('✗ .claude/commands/broken.md is left out: its frontmatter');
    expect(sent).toEqual([]);
    writeFileSync(join(root, '.claude/commands/broken.md'), '---\ndescription: fixed\n---\nNow fixed: $1');
    await rig.submit('/broken yes');
    await rig.settle();
    expect(sent).toEqual(['Now fixed: yes']);
  });
});

describe('pasting', () => {
  it('keeps a bracketed paste as text, line breaks included, however it is split: Enter then sends one message', async () => {
    const { rig, sent } = await rigOver(undefined);
    // The terminal's markers around the paste, a line break arriving on its own as Enter would.
    await rig.press('\u001B[200~first line\rsecond line\r', '\r', 'third\tline\u0007\r\u001B[201~');
    expect(sent).toEqual([]);
    // The paste's last line break too: the cursor waits on a new line.
    expect(promptBox(rig.frame())).toBe('› first line\n  second line\n\n  third line\n');
    await rig.press('\r');
    await rig.settle();
    expect(sent).toEqual(['first line\nsecond line\n\nthird\tline']);
    expect(rig.frame()).not.toContain('[200~');
  });

  it('keeps an unbracketed multi-line chunk as text too; a one-line chunk ending in Enter is sent', async () => {
    const { rig, sent } = await rigOver(undefined);
    await rig.press('alpha\rbeta\r');
    expect(sent).toEqual([]);
    await rig.press('\r');
    await rig.settle();
    await rig.press('gamma\r');
    await rig.settle();
    expect(sent).toEqual(['alpha\nbeta', 'gamma']);
  });
});
