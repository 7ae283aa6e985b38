import { describe, expect, it } from 'vitest';
import { attachMentions, attachmentNotes, findMentions, normalise, splitAttachments, type MentionTarget } from './mentions.js';
import { completeMention } from './path-completion.js';

const bytes = (s: string) => new TextEncoder().encode(s);

/** A working tree as a reader sees it. */
function reader(tree: Record<string, MentionTarget | string>) {
  const reads: string[] = [];
  const read = (path: string): MentionTarget => {
    reads.push(path);
    const t = tree[path.replace(/\/$/, '')];
    if (t === undefined) return { kind: 'missing' };
    return typeof t === 'string' ? { kind: 'file', head: bytes(t), size: bytes(t).length } : t;
  };
  return { read, reads };
}

describe('finding @ mentions', () => {
  it('takes words starting with @, quoted ones with spaces, and not e-mail addresses', () => {
    const text = 'see @src/a.ts and @"docs/my notes.md", mail me@example.com\n@b';
    expect(findMentions(text).map((m) => [m.path, text.slice(m.start, m.end)])).toEqual([
      ['src/a.ts', '@src/a.ts'],
      ['docs/my notes.md', '@"docs/my notes.md"'],
      ['b', '@b'],
    ]);
  });

  it('normalises paths, refusing absolute ones and those climbing out', () => {
    expect(normalise('./src//a.ts')).toBe('src/a.ts');
    expect(normalise('src/../lib/')).toBe('lib/');
    expect(normalise('.')).toBe('');
    expect(normalise('../x')).toBeUndefined();
    expect(normalise('/etc/hosts')).toBeUndefined();
    expect(normalise('~/.ssh/id_rsa')).toBeUndefined();
  });
});

describe('attaching what mentions name', () => {
  it("appends each file's content once, after the text as typed", () => {
    const { read } = reader({ 'src/a.ts': 'export const a = 1;\n', 'b.md': '# B\n\ntext\n' });
    const r = attachMentions('compare @src/a.ts with @b.md. Then @src/a.ts again', read);
    expect(r.message).toBe(
      'compare @src/a.ts with @b.md. Then @src/a.ts again\n\n' +
        '<attached-file path="src/a.ts" lines="1">\nexport const a = 1;\n</attached-file>\n\n' +
        '<attached-file path="b.md" lines="3">\n# B\n\ntext\n</attached-file>',
    );
    expect(attachmentNotes(r)).toEqual(['attached src/a.ts (1 line)', 'attached b.md (3 lines)']);
  });

  it('lists a directory, skips binary files, and leaves names and missing paths as text', () => {
    const { read } = reader({
      src: { kind: 'directory', entries: ['a.ts', 'lib/'] },
      'logo.png': { kind: 'file', head: new Uint8Array([0x89, 0x50, 0, 1]), size: 2048 },
      link: { kind: 'outside' },
    });
    const r = attachMentions("look at @src/ and @logo.png, ask @alice, open @src/mian.ts and @link; @app.route('/x')", read);
    expect(r.message).toBe(
      "look at @src/ and @logo.png, ask @alice, open @src/mian.ts and @link; @app.route('/x')\n\n" +
        '<attached-directory path="src/" lines="2">\na.ts\nlib/\n</attached-directory>',
    );
    expect(attachmentNotes(r)).toEqual([
      'attached src/ (2 entries)',
      'not attached: logo.png (a binary file (2 KB))',
      'not attached: src/mian.ts (no such file or directory)',
      'not attached: link (outside the repository)',
    ]);
  });

  it('sends nothing for a path out of the repository, and never asks for it', () => {
    const { read, reads } = reader({});
    const r = attachMentions('read @../secret and @/etc/passwd', read);
    expect(r.message).toBe('read @../secret and @/etc/passwd');
    expect(reads).toEqual([]);
    expect(r.skipped.map((s) => s.reason)).toEqual(['outside the repository', 'outside the repository']);
  });

  it('cuts a large file at a line end and says how much was shown; stops at the total limit', () => {
    const big = Array.from({ length: 100 }, (_, i) => `line ${i}`).join('\n');
    const { read } = reader({
      // The reader read only the head; the file is larger.
      'big.log': { kind: 'file', head: bytes(big.slice(0, 300)), size: 5000 },
      'small.txt': 'one\ntwo\n',
      'more.txt': 'three\n',
    });
    const r = attachMentions('@big.log @small.txt @more.txt', read, { fileBytes: 100, totalBytes: 102, directoryEntries: 10 });
    const block = /<attached-file path="big.log" lines="14">\n([\s\S]*?)\n<\/attached-file>/.exec(r.message)![1];
    expect(block).toBe('line 0\nline 1\nline 2\nline 3\nline 4\nline 5\nline 6\nline 7\nline 8\nline 9\nline 10\nline 11\nline 12\n' +
      '[… truncated: the first 94 B of 5 KB are shown; read_file reads the rest]');
    expect(r.message).toContain('<attached-file path="small.txt" lines="2">\none\ntwo\n</attached-file>');
    expect(attachmentNotes(r)).toEqual([
      'attached big.log (13 lines, truncated)',
      'attached small.txt (2 lines)',
      'not attached: more.txt (the message\'s attachments reached their limit (102 B))',
    ]);
  });
});

describe('reading a sent message back', () => {
  it('splits off its attachment blocks, whatever they hold', () => {
    const { read } = reader({ 'a.md': 'x\n\n<attached-file path="fake" lines="1">\ny\n</attached-file>\n', src: { kind: 'directory', entries: ['b.ts'] } });
    const r = attachMentions('see @a.md and @src\n\nthanks', read);
    expect(splitAttachments(r.message)).toEqual({ typed: 'see @a.md and @src\n\nthanks', attached: ['a.md', 'src/'] });
    expect(splitAttachments('no attachments <attached-file path="x">')).toEqual({ typed: 'no attachments <attached-file path="x">', attached: [] });
  });
});

describe('completing @ mentions', () => {
  const paths = ['README.md', 'src/main.ts', 'src/math/add.ts', 'src/math/sub.ts', 'src/util.ts', 'docs/my notes.md'];

  it('completes a unique file with a space after it, a folder with its slash', () => {
    expect(completeMention('see @src/u', 10, paths)).toEqual({ value: 'see @src/util.ts ', cursor: 17, candidates: [] });
    expect(completeMention('@src/math/a and more', 11, paths)).toEqual({ value: '@src/math/add.ts  and more', cursor: 17, candidates: [] });
    expect(completeMention('@R', 2, paths)).toEqual({ value: '@README.md ', cursor: 11, candidates: [] });
  });

  it('extends to the common prefix and lists the candidates one level down', () => {
    expect(completeMention('@src/ma', 7, paths)).toEqual({ value: '@src/ma', cursor: 7, candidates: ['@src/main.ts', '@src/math/'] });
    expect(completeMention('@src/math/', 10, paths)).toEqual({
      value: '@src/math/',
      cursor: 10,
      candidates: ['@src/math/add.ts', '@src/math/sub.ts'],
    });
    expect(completeMention('@s', 2, paths)).toEqual({ value: '@src/', cursor: 5, candidates: [] });
    expect(completeMention('@', 1, paths)?.candidates).toEqual(['@README.md', '@docs/', '@src/']);
  });

  it('falls back to base names, quotes paths with spaces, and leaves other words alone', () => {
    expect(completeMention('@add', 4, paths)).toEqual({ value: '@src/math/add.ts ', cursor: 17, candidates: [] });
    expect(completeMention('@docs/my', 8, paths)).toEqual({ value: '@"docs/my notes.md" ', cursor: 20, candidates: [] });
    expect(completeMention('@"docs/my n', 11, paths)).toEqual({ value: '@"docs/my notes.md" ', cursor: 20, candidates: [] });
    expect(completeMention('@zzz', 4, paths)).toEqual({ value: '@zzz', cursor: 4, candidates: [] });
    expect(completeMention('mail a@src', 10, paths)).toBeUndefined();
    expect(completeMention('@src/ma rest', 12, paths)).toBeUndefined();
  });

  it('lists at most 30 candidates and counts the rest', () => {
    const many = Array.from({ length: 40 }, (_, i) => `f${String(i).padStart(2, '0')}.txt`);
    const c = completeMention('@f', 2, many)!;
    expect(c.value).toBe('@f');
    expect(c.candidates).toHaveLength(31);
    expect(c.candidates.at(-1)).toBe('… 10 more');
  });
});
