import { stripVTControlCharacters } from 'node:util';
import { render } from 'ink-testing-library';
import stringWidth from 'string-width';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { highlightCode } from './code-highlight.js';
import { LiveTurn } from './live-turn.js';
import { Markdown, MarkdownContext, MarkdownProvider, type MarkdownContextValue } from './markdown.js';
import { markdownLines } from './markdown-lines.js';
import { startRig, type Rig } from './testing.js';
import { Entry } from './transcript.js';

// Ink colours through chalk, which decides when it loads: this file's own worker has colours on,
// so the frames below carry the escape codes a terminal would get.
vi.hoisted(() => {
  process.env.FORCE_COLOR = '1';
});

const ESC = '\u001b[';
const BOLD = `${ESC}1m`;
const ITALIC = `${ESC}3m`;
const MAGENTA = `${ESC}35m`;
const GREEN = `${ESC}32m`;
const CYAN = `${ESC}36m`;
/** Whether any foreground colour is set. */
const coloured = (raw: string) => raw.split(ESC).some((p) => /^(3[0-7]|9[0-7])m/.test(p));

const RENDERER = { render: markdownLines, highlight: highlightCode };
const COLOURED: MarkdownContextValue = { color: true, renderer: RENDERER };

/** The raw frame (escape codes kept) and its text. */
function draw(node: React.ReactElement, settings: MarkdownContextValue = COLOURED): { raw: string; text: string } {
  const ui = render(<MarkdownContext.Provider value={settings}>{node}</MarkdownContext.Provider>);
  const raw = ui.lastFrame() ?? '';
  ui.unmount();
  return { raw, text: stripVTControlCharacters(raw) };
}

let rig: Rig | undefined;
afterEach(async () => {
  await rig?.close();
  rig = undefined;
});

describe('the agent text rendered as markdown', () => {
  it('shows a fenced code block without its fences, its code indented and coloured by language', () => {
    const { raw, text } = draw(<Markdown text={'Try this:\n\n```ts\nconst answer: number = 42;\nreturn "done";\n```\n\nThen run it.'} width={60} />);
    expect(text).not.toContain('```');
    expect(text.split('\n').map((l) => l.trimEnd())).toEqual(['Try this:', '', '  const answer: number = 42;', '  return "done";', '', 'Then run it.']);
    // Keywords magenta, strings green (highlight.js's TypeScript grammar).
    expect(raw).toContain(`${MAGENTA}const`);
    expect(raw).toContain(`${GREEN}"done"`);
  });

  it('shows lists with bullets and numbers, nested lists indented under their item, tasks as boxes', () => {
    const { text } = draw(<Markdown text={'- apples\n- pears\n  - green ones\n- [x] done\n\n1. first\n2. second'} width={60} />);
    const lines = text.split('\n').map((l) => l.trimEnd());
    expect(lines).toEqual(['• apples', '• pears', '  ◦ green ones', '☑ done', '', '1. first', '2. second']);
  });

  it('wraps a long list item under its text, not under its bullet', () => {
    const { text } = draw(<Markdown text={'- one two three four five six seven eight nine ten'} width={20} />);
    expect(text.split('\n').map((l) => l.trimEnd())).toEqual(['• one two three four', '  five six seven', '  eight nine ten']);
  });

  it('shows a heading without its hashes, in bold', () => {
    const { raw, text } = draw(<Markdown text={'## The plan\n\nBody.'} width={60} />);
    expect(text).not.toContain('#');
    expect(text).toMatch(/^The plan\s*\n\s*\nBody\./);
    expect(raw).toContain(`${BOLD}The plan`);
  });

  it('shows emphasis, inline code and links styled, without their markers', () => {
    const { raw, text } = draw(<Markdown text={'A **bold** claim, an *aside*, `npm test`, and [the docs](https://example.com/docs).'} width={80} />);
    expect(text.trimEnd()).toBe('A bold claim, an aside, npm test, and the docs (https://example.com/docs).');
    expect(raw).toContain(`${BOLD}bold`);
    expect(raw).toContain(`${ITALIC}aside`);
    expect(raw).toContain(`${CYAN}npm test`);
  });

  it('without colours (NO_COLOR) keeps bold and the backticks of inline code, and no colour code at all', () => {
    const { raw, text } = draw(<Markdown text={'**Done**: ran `npm test`.\n\n```ts\nconst x = 1;\n```'} width={60} />, { color: false, renderer: RENDERER });
    expect(text).toContain('Done: ran `npm test`.');
    expect(text).toContain('  const x = 1;');
    expect(raw).toContain(`${BOLD}Done`);
    expect(coloured(raw)).toBe(false);
  });

  it('wraps at the width counting wide characters as two columns, and cuts code lines rather than letting them run off', () => {
    const width = 24;
    const md = `${'漢字'.repeat(10)} end\n\n\`\`\`\n${'x'.repeat(60)}\n\`\`\``;
    const { text } = draw(<Markdown text={md} width={width} />);
    const lines = text.split('\n').map((l) => l.trimEnd());
    for (const l of lines) expect(stringWidth(l)).toBeLessThanOrEqual(width);
    expect(lines.join('')).toContain('漢字'.repeat(10));
    expect(lines.filter((l) => /^ {2}x+$/.test(l)).map((l) => l.trim().length)).toEqual([22, 22, 16]);
  });

  it('shows a table as a grid, or as "header: cell" lines when it is too wide', () => {
    const md = '| Name | Size |\n|------|-----:|\n| a.ts | 12 |\n| long-name.ts | 3 |';
    expect(draw(<Markdown text={md} width={60} />).text.split('\n').map((l) => l.trimEnd())).toEqual([
      'Name         │ Size',
      '─────────────┼─────',
      'a.ts         │   12',
      'long-name.ts │    3',
    ]);
    expect(draw(<Markdown text={md} width={12} />).text.split('\n').map((l) => l.trimEnd())).toEqual(['Name: a.ts', 'Size: 12', '', 'Name:', 'long-name.ts', 'Size: 3']);
  });

  it('shows HTML and block quotes as text, escape sequences from the model dropped', () => {
    const { text } = draw(<Markdown text={'<details>open</details>\n\n> quoted *words*\n\nred \u001b[31mtext\u001b[0m & more'} width={60} />);
    expect(text.split('\n').map((l) => l.trimEnd())).toEqual(['<details>open</details>', '', '│ quoted words', '', 'red text & more']);
  });

  it('while streaming, shows an unclosed code fence as code so far, coloured, and keeps to the last rows', () => {
    const partial = 'Here is the fix:\n\n```js\nfunction add(a, b) {\n  return a + b;\n';
    const live = (text: string, maxLines: number) => (
      <MarkdownContext.Provider value={COLOURED}>
        <LiveTurn text={text} busy running={[]} maxLines={maxLines} animate={false} />
      </MarkdownContext.Provider>
    );
    const ui = render(live(partial, 10));
    let text = stripVTControlCharacters(ui.lastFrame() ?? '');
    expect(text).not.toContain('```');
    expect(text).toMatch(/● Here is the fix:\s*\n\s*\n\s+function add\(a, b\) \{\s*\n\s+return a \+ b;/);
    expect(ui.lastFrame()).toContain(`${MAGENTA}function`);
    expect(text).toContain('Writing… (Esc to stop)');

    // More of the reply: the fence closes and the text goes on; only the last rows stay live.
    ui.rerender(live(`${partial}}\n\`\`\`\n\nThat **fixes** it.`, 3));
    text = stripVTControlCharacters(ui.lastFrame() ?? '');
    ui.unmount();
    expect(text).toContain('… 4 more lines above (shown in full when done)');
    expect(text).toMatch(/● {3}\}\s*\n\s*\n\s+That fixes it\./);
    expect(text).not.toContain('**');
  });

  it('shows a child report as markdown under its heading', () => {
    const { text } = draw(<Entry item={{ kind: 'report', id: 1, from: 'thread ab12', text: 'Done:\n\n1. **parser** fixed\n2. tests added' }} />);
    expect(text.split('\n').map((l) => l.trimEnd())).toEqual(['', '↳ Report from thread ab12', '  Done:', '', '  1. parser fixed', '  2. tests added']);
  });

  it('shows text as it is until the renderer has loaded, then rendered; settled only once it is in use', async () => {
    let settled!: () => void;
    const inUse = new Promise<void>((resolve) => (settled = resolve));
    const ui = render(
      <MarkdownProvider color load={() => Promise.resolve(RENDERER)} onSettled={settled}>
        <Markdown text={'Some **bold** words.'} width={40} />
      </MarkdownProvider>,
    );
    expect(stripVTControlCharacters(ui.lastFrame() ?? '')).toBe('Some **bold** words.');
    await inUse;
    const raw = ui.lastFrame() ?? '';
    ui.unmount();
    expect(stripVTControlCharacters(raw)).toBe('Some bold words.');
    expect(raw).toContain(`${BOLD}bold`);
  });

  it('in the app, a finished reply is printed rendered', async () => {
    rig = await startRig({ brain: () => ({ text: '## Summary\n\n- **fixed** the bug\n- added `a.test.ts`\n\n```sh\nnpm test\n```' }) });
    await rig.submit('fix it');
    await rig.settle();
    const f = rig.frame();
    expect(f).toMatch(/● Summary\s*\n\s*\n\s+• fixed the bug\s*\n\s+• added a\.test\.ts\s*\n\s*\n\s+npm test/);
    expect(f).not.toMatch(/\*\*|```|##/);
  });
});
