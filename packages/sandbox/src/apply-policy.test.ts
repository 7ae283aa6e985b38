// The rules alone, on changes written out by hand: cases a real sandbox cannot produce (git
// refuses `.git` paths in a tree) and the arithmetic of limits. suite-policy.ts runs the same
// rules on real repositories for every backend.
import { describe, expect, it } from 'vitest';
import { classifyChanges, DEFAULT_APPLY_POLICY, resolveLink, type PolicyChange, type PolicyFacts } from './apply-policy.js';
import { escapedName } from './utf8-names.js';

const MB = 1024 * 1024;
const none: PolicyFacts = { nestedRepos: new Set(), links: new Map() };
const file = (path: string, extra: Partial<PolicyChange> = {}): PolicyChange => ({ path, newMode: '100644', newSize: 10, ...extra });

describe('resolveLink', () => {
  const links = new Map([
    ['out', '/etc'],
    ['docs/up', '..'],
    ['loop-a', 'loop-b'],
    ['loop-b', 'loop-a'],
    ['sub/here', '.'],
  ]);
  it.each([
    ['a', '/abs', { kind: 'outside' }],
    ['a', '..', { kind: 'outside' }],
    ['x/y/a', '../../b', { kind: 'inside', path: 'b' }],
    ['x/y/a', '../../../b', { kind: 'outside' }],
    ['a', 'docs/up/README', { kind: 'inside', path: 'README' }],
    ['a', 'docs/up/../x', { kind: 'outside' }],
    ['a', 'out/passwd', { kind: 'outside' }],
    ['a', 'loop-a', { kind: 'loop' }],
    ['a', './sub/here/./here/f', { kind: 'inside', path: 'sub/f' }],
    ['a', '.', { kind: 'inside', path: '' }],
  ] as const)('%s -> %s', (at, target, want) => {
    expect(resolveLink(at, target, links)).toEqual(want);
  });
});

describe('classifyChanges', () => {
  it('leaves out .git at any depth and in any case, renames touching a reserved directory, and gitlinks', () => {
    const changes = [
      file('ok.txt'),
      file('a/b/.git/config'),
      file('.GIT/hooks/pre-commit'),
      file('into.txt', { oldPath: '.infinity/config.json', oldMode: '100644' }),
      file('vendor/lib', { newMode: '160000' }),
      file('.infinity-not/x'),
    ];
    const { kept, omitted } = classifyChanges(changes, none, DEFAULT_APPLY_POLICY);
    expect(kept.map((c) => c.path)).toEqual(['ok.txt', '.infinity-not/x']);
    expect(omitted.map((o) => [o.path, o.rule])).toEqual([
      ['vendor/lib/', 'nested-repo'],
      ['a/b/.git/config', 'git-dir'],
      ['.GIT/hooks/pre-commit', 'git-dir'],
      ['into.txt', 'reserved-dir'],
    ]);
  });

  it('reports a nested repository once, however many of its files changed, and also when none did', () => {
    const facts = { ...none, nestedRepos: new Set(['sub', 'empty']) };
    const { kept, omitted } = classifyChanges([file('sub/a'), file('sub/b/c'), file('subway')], facts, DEFAULT_APPLY_POLICY);
    expect(kept.map((c) => c.path)).toEqual(['subway']);
    expect(omitted.map((o) => o.path)).toEqual(['empty/', 'sub/']);
  });

  it('checks the user-ignored rule only for files the diff creates', () => {
    const facts = { ...none, userIgnored: new Set(['.env', 'old.env', 'moved.env']) };
    const changes = [file('.env'), file('old.env', { oldMode: '100644' }), file('moved.env', { oldPath: 'src.env', oldMode: '100644' })];
    const { kept, omitted } = classifyChanges(changes, facts, DEFAULT_APPLY_POLICY);
    expect(kept.map((c) => c.path)).toEqual(['old.env']);
    expect(omitted.map((o) => o.rule)).toEqual(['user-ignored', 'user-ignored']);
  });

  it('counts the bigger side against the per-file limit, and stops the whole diff before git output could overflow', () => {
    const policy = { ...DEFAULT_APPLY_POLICY, maxFileBytes: 20 * MB, maxDiffBytes: 90 * MB };
    const changes = [
      file('deleted.bin', { newMode: undefined, newSize: undefined, oldMode: '100644', oldSize: 21 * MB }),
      file('a.bin', { newSize: 19 * MB }),
      file('b.bin', { newSize: 19 * MB }),
      file('c.bin', { newSize: 19 * MB }),
      file('small.txt'),
    ];
    const { kept, omitted } = classifyChanges(changes, none, policy);
    expect(kept.map((c) => c.path)).toEqual(['a.bin', 'b.bin', 'small.txt']);
    expect(omitted).toEqual([
      { path: 'deleted.bin', rule: 'too-large', size: 21 * MB, reason: '21 MB, over the 20 MB limit for one file: left as it was' },
      {
        path: 'c.bin',
        rule: 'diff-too-large',
        size: 19 * MB,
        reason: "19 MB: the diff had reached 76 MB, near the most git's output can carry: left as it was",
      },
    ]);
  });

  it('keeps out a change that needs the place of one left out (a file put back where a directory was wanted)', () => {
    // The agent replaced the file `cfg` by a directory: `cfg` is deleted, `cfg/x` added. The
    // deletion is too big to diff, so `cfg` stays a file, and `cfg/x` cannot be.
    const changes = [
      file('cfg', { newMode: undefined, newSize: undefined, oldMode: '100644', oldSize: 30 * MB }),
      file('cfg/x'),
      file('other'),
    ];
    const { kept, omitted } = classifyChanges(changes, none, DEFAULT_APPLY_POLICY);
    expect(kept.map((c) => c.path)).toEqual(['other']);
    expect(omitted.map((o) => [o.path, o.rule])).toEqual([
      ['cfg', 'too-large'],
      ['cfg/x', 'blocked'],
    ]);
    expect(omitted[1].reason).toBe('its place is taken by cfg, which was left as it was');
  });
  it('leaves out, before any other rule, every change whose path is not UTF-8 on either side, named as git escapes it', () => {
    const latin1 = (p: string) => escapedName(Buffer.from(p, 'latin1'));
    const changes = [
      file('ok.txt'),
      file(latin1('caf\xe9.txt'), { oldMode: '100644' }),
      file(latin1('.infinity/n\xe9w')),
      file(latin1('gone\xe9.txt'), { newMode: undefined, newSize: undefined, oldMode: '100644' }),
      file(latin1('to\xe9'), { oldPath: 'from.txt', oldMode: '100644' }),
      file('caf\u00e9.txt'),
    ];
    const { kept, omitted } = classifyChanges(changes, none, DEFAULT_APPLY_POLICY);
    expect(kept.map((c) => c.path)).toEqual(['ok.txt', 'café.txt']);
    expect(omitted.map((o) => [o.path, o.rule])).toEqual([
      ['caf\\351.txt', 'non-utf8-name'],
      ['.infinity/n\\351w', 'non-utf8-name'],
      ['gone\\351.txt', 'non-utf8-name'],
      ['to\\351', 'non-utf8-name'],
    ]);
    expect(omitted[0].reason).toBe('its name is not valid UTF-8, which Infinity Code cannot carry: left as it was; give it a UTF-8 name in the sandbox to include it');
    expect(omitted[2].reason).toBe('its name is not valid UTF-8, which Infinity Code cannot carry: left as it was; the agent deleted it, so delete it yourself if it should go');
  });

  it('leaves out every change under a directory past a path limit with one entry for it, also for what the backend could not read', () => {
    const deep = Array.from({ length: 300 }, () => 'x').join('/');
    const prefix = `${'x/'.repeat(257)}`;
    const long = `${'n'.repeat(250)}/`.repeat(12) + 'f'.repeat(100);
    const changes = [file('ok.txt'), file(`${deep}/a`), file(`${deep}/b`, { oldMode: '100644' }), file(long), file('moved.txt', { oldPath: `${deep}/c`, oldMode: '100644' })];
    const { kept, dropped, omitted } = classifyChanges(changes, { ...none, tooLong: ['y/unreadable/'] }, DEFAULT_APPLY_POLICY);
    expect(kept.map((c) => c.path)).toEqual(['ok.txt']);
    expect(dropped).toHaveLength(4);
    expect(omitted.map((o) => [o.path, o.rule])).toEqual([
      ['y/unreadable/', 'path-too-long'],
      [prefix, 'path-too-long'],
      [long, 'path-too-long'],
    ]);
    const limits = 'a path may be up to 256 levels deep and 3,072 bytes long';
    expect(omitted[1].reason).toBe(
      `path too deep/long to apply (513 bytes, 257 directories deep; ${limits}): nothing under it was included; move what is there to a shorter path in the sandbox to include it`,
    );
    expect(omitted[2].reason).toBe(`path too deep/long to apply (3,112 bytes, 12 directories deep; ${limits}): left as it was; give it a shorter path in the sandbox to include it`);
  });

  it('leaves out a change the working tree has something in the way of, saying what and where', () => {
    const obstacles = new Map([
      ['link/f', { kind: 'symlink' as const, at: 'link' }],
      ['plain/f', { kind: 'file' as const, at: 'plain' }],
      ['build', { kind: 'dir' as const }],
    ]);
    const changes = [file('link/f'), file('plain/f'), file('build'), file('free.txt')];
    const { kept, omitted } = classifyChanges(changes, { ...none, obstacles }, DEFAULT_APPLY_POLICY);
    expect(kept.map((c) => c.path)).toEqual(['free.txt']);
    expect(omitted).toEqual([
      {
        path: 'link/f',
        rule: 'in-the-way',
        reason: 'your working tree has a symbolic link at link, where this path needs a directory: nothing was written through it or in its place; left as it was',
      },
      {
        path: 'plain/f',
        rule: 'in-the-way',
        reason: 'your working tree has a file at plain, where this path needs a directory: nothing was written through it or in its place; left as it was',
      },
      {
        path: 'build',
        rule: 'in-the-way',
        reason:
          'your working tree has a directory here holding files the agent never saw (yours, or ignored by your git rules), so the file could not take its place: left as it was',
      },
    ]);
  });
});
