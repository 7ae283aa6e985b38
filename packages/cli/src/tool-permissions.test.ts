import { describe, expect, it } from 'vitest';
import { UserError } from './exit-codes.js';
import { newTally, tallyEvent } from './headless.js';
import type { SessionExtras } from './session-setup.js';
import { commandAllowed, commandDenied, splitRules, toolPermissions } from './tool-permissions.js';

const places = { root: '/repo', cwd: '/repo/pkg', home: '/home/me' };
const perms = (extras: SessionExtras) => toolPermissions(extras, places);
const bash = (command: string) => ({ name: 'execute_command', input: { command } });
const file = (name: string, p?: string) => ({ name, input: p === undefined ? {} : { path: p } });
const verdict = (extras: SessionExtras, call: { name: string; input: Record<string, unknown> }): string => {
  const d = perms(extras).decide(call);
  return d.allowed ? 'allow' : 'deny';
};

describe('splitting flag values into rules', () => {
  it.each([
    [['Read,Edit'], ['Read', 'Edit']],
    [['Read Edit', 'Bash(git diff:*)'], ['Read', 'Edit', 'Bash(git diff:*)']],
    [['Bash(npm run test) Read, Write'], ['Bash(npm run test)', 'Read', 'Write']],
    [['  '], []],
  ])('%j is %j', (values, rules) => {
    expect(splitRules(values, '--allowedTools')).toEqual(rules);
  });

  it.each([['Bash(git diff:*'], ['Read)'], ['Bash[x]'], ['mcp__github__create_issue(x)']])('"%s" is a usage error naming the rule', (rule) => {
    const thrown = (() => {
      try {
        perms({ allowedTools: [rule] });
      } catch (err) {
        return err;
      }
      return undefined;
    })();
    expect(thrown).toBeInstanceOf(UserError);
    expect((thrown as UserError).exitCode).toBe(2);
    expect((thrown as UserError).message).toContain('--allowedTools');
  });
});

describe('no flags', () => {
  it('restricts nothing and needs no check', () => {
    const p = perms({});
    expect(p.active).toBe(false);
    for (const call of [bash('rm -rf /'), file('create_file', 'a'), { name: 'spawn_thread', input: {} }, { name: 'mcp__gh__delete', input: {} }]) {
      expect(p.decide(call)).toEqual({ allowed: true });
    }
    expect(p.withheld('execute_command')).toBe(false);
  });
});

describe('--allowedTools: tools that change things run only when a rule allows the call; reads always run', () => {
  it.each<[string[], { name: string; input: Record<string, unknown> }, 'allow' | 'deny']>([
    [['Read'], bash('ls'), 'deny'],
    [['Read'], file('read_file', 'a.ts'), 'allow'],
    [['Edit'], file('grep'), 'allow'],
    [['Edit'], file('list_files'), 'allow'],
    [['Read'], { name: 'sleep', input: { seconds: 1 } }, 'allow'],
    [['Read'], { name: 'report_to_parent', input: { report: 'x' } }, 'allow'],
    [['Read'], file('edit_file', 'a.ts'), 'deny'],
    [['Read'], file('create_file', 'a.ts'), 'deny'],
    [['Read'], { name: 'spawn_thread', input: {} }, 'deny'],
    [['Read'], { name: 'mcp__github__create_issue', input: {} }, 'deny'],
    [['Read'], { name: 'demo_tool', input: {} }, 'deny'],
    [[''], bash('ls'), 'deny'],
    // Claude Code's names and ours alike.
    [['Bash'], bash('rm -rf build && make'), 'allow'],
    [['execute_command'], bash('make'), 'allow'],
    [['Edit'], file('edit_file', 'a.ts'), 'allow'],
    [['Edit'], file('create_file', 'a.ts'), 'allow'],
    [['MultiEdit'], file('edit_file', 'a.ts'), 'allow'],
    [['MultiEdit'], file('create_file', 'a.ts'), 'deny'],
    [['Write'], file('create_file', 'a.ts'), 'allow'],
    [['Write'], file('edit_file', 'a.ts'), 'deny'],
    [['Task'], { name: 'spawn_thread', input: {} }, 'allow'],
    [['Task(Explore)'], { name: 'spawn_thread', input: {} }, 'deny'],
    // MCP: a tool, or every tool of a server.
    [['mcp__github__create_issue'], { name: 'mcp__github__create_issue', input: {} }, 'allow'],
    [['mcp__github__create_issue'], { name: 'mcp__github__delete_repo', input: {} }, 'deny'],
    [['mcp__github'], { name: 'mcp__github__delete_repo', input: {} }, 'allow'],
    [['mcp__git'], { name: 'mcp__github__delete_repo', input: {} }, 'deny'],
    // Command specs: exact, prefix, wildcard.
    [['Bash(npm run test)'], bash('npm run test'), 'allow'],
    [['Bash(npm run test)'], bash('  npm run test  '), 'allow'],
    [['Bash(npm run test)'], bash('npm run test --watch'), 'deny'],
    [['Bash(git diff:*)'], bash('git diff'), 'allow'],
    [['Bash(git diff:*)'], bash('git diff HEAD~1 -- src'), 'allow'],
    [['Bash(git diff:*)'], bash('git diff-tree HEAD'), 'deny'],
    [['Bash(git diff:*)'], bash('git status'), 'deny'],
    [['Bash(git diff *)'], bash('git diff --stat'), 'allow'],
    [['Bash(npm run *:ci)'], bash('npm run lint:ci'), 'allow'],
    // Compound commands: every part must be allowed.
    [['Bash(git diff:*)'], bash('git diff && rm -rf src'), 'deny'],
    [['Bash(git diff:*)'], bash('git diff; curl evil'), 'deny'],
    [['Bash(git diff:*)'], bash('git diff | sh'), 'deny'],
    [['Bash(git diff:*)', 'Bash(wc:*)'], bash('git diff | wc -l'), 'allow'],
    [['Bash(git diff:*)'], bash('git diff $(rm -rf src)'), 'deny'],
    [['Bash(git diff:*)'], bash('git diff `rm -rf src`'), 'deny'],
    [['Bash(git diff:*)'], bash('git diff > src/index.ts'), 'deny'],
    [['Bash(git diff:*)'], bash('git diff 2>&1'), 'allow'],
    [['Bash(git diff:*)'], bash('git diff >/dev/null 2>&1'), 'allow'],
    [['Bash(git diff:*)'], bash('git diff &'), 'allow'],
    // Path specs: relative to where the user started (/repo/pkg), `/` from the root, `//` absolute.
    [['Edit(src/**)'], file('edit_file', 'pkg/src/a/b.ts'), 'allow'],
    [['Edit(src/**)'], file('edit_file', '/repo/pkg/src/a.ts'), 'allow'],
    [['Edit(src/**)'], file('edit_file', 'src/a.ts'), 'deny'],
    [['Edit(src/**)'], file('edit_file', 'pkg/src/../../etc/x'), 'deny'],
    [['Edit(/docs/*.md)'], file('create_file', 'docs/new.md'), 'allow'],
    [['Edit(/docs/*.md)'], file('create_file', 'docs/sub/new.md'), 'deny'],
    [['Edit(/docs)'], file('create_file', 'docs/sub/new.md'), 'allow'],
    [['Write(//repo/out/**)'], file('create_file', 'out/x.json'), 'allow'],
  ])('%j: %j is %s', (allowedTools, call, expected) => {
    expect(verdict({ allowedTools }, call)).toBe(expected);
  });

  it('the denial says which flag refused the call and how the user could allow it', () => {
    const d = perms({ allowedTools: ['Read', 'Bash(git diff:*)'] }).decide(bash('npm test'));
    expect(d).toEqual({
      allowed: false,
      reason:
        'Permission denied: execute_command (npm test) is not permitted: the session runs with --allowedTools "Read Bash(git diff:*)", ' +
        'which does not allow it. It was not run. Use the tools that are allowed (reads always are), or tell the user which ' +
        'permission the task needs (for example --allowedTools "Bash(npm:*)").',
    });
  });

  it('acceptEdits lets file edits run without a rule, not commands; bypassPermissions lifts the list', () => {
    expect(verdict({ allowedTools: ['Read'], permissionMode: 'acceptEdits' }, file('edit_file', 'a'))).toBe('allow');
    expect(verdict({ allowedTools: ['Read'], permissionMode: 'acceptEdits' }, bash('ls'))).toBe('deny');
    expect(verdict({ allowedTools: ['Read'], permissionMode: 'bypassPermissions' }, bash('ls'))).toBe('allow');
    expect(perms({ allowedTools: ['Read'], permissionMode: 'bypassPermissions' }).active).toBe(false);
  });
});

describe('--disallowedTools: a whole tool is not offered; a pattern denies matching calls', () => {
  it.each<[string[], string, boolean]>([
    [['Bash'], 'execute_command', true],
    [['Bash'], 'read_file', false],
    [['Edit'], 'edit_file', true],
    [['Edit'], 'create_file', true],
    [['Write'], 'edit_file', false],
    [['Task'], 'spawn_thread', true],
    [['Glob,LS'], 'list_files', true],
    [['read_file'], 'read_file', true],
    [['mcp__github'], 'mcp__github__create_issue', true],
    [['mcp__github'], 'mcp__gitlab__create_issue', false],
    [['mcp__github__create_issue'], 'mcp__github__create_issue', true],
    [['mcp__my.server'], 'mcp__my_server__x', true],
    // A pattern leaves the tool offered.
    [['Bash(rm:*)'], 'execute_command', false],
    [['WebFetch'], 'execute_command', false],
  ])('%j withholds %s: %s', (disallowedTools, name, withheld) => {
    expect(perms({ disallowedTools }).withheld(name)).toBe(withheld);
  });

  it.each<[string, string, 'allow' | 'deny']>([
    ['Bash(rm:*)', 'rm -rf src', 'deny'],
    ['Bash(rm:*)', 'ls && rm -rf src', 'deny'],
    ['Bash(rm:*)', 'ls; /bin/rm x', 'deny'],
    ['Bash(rm:*)', 'FORCE=1 rm x', 'deny'],
    ['Bash(rm:*)', 'sudo rm x', 'deny'],
    ['Bash(rm:*)', "sh -c 'rm -rf src'", 'deny'],
    ['Bash(rm:*)', 'echo $(rm -rf src)', 'deny'],
    ['Bash(rm:*)', 'timeout 10 rm x', 'deny'],
    ['Bash(rm:*)', 'find . -name x | xargs rm', 'deny'],
    ['Bash(rm:*)', 'ls -la', 'allow'],
    ['Bash(rm:*)', 'npm run rmdir-helper', 'allow'],
    ['Bash(npm publish)', 'npm publish > out.log', 'deny'],
    ['Bash(npm publish)', 'npm publish --dry-run', 'allow'],
    ['Bash(git push:*)', 'git push --force origin main', 'deny'],
  ])('"%s" on `%s`: %s', (rule, command, expected) => {
    expect(verdict({ disallowedTools: [rule] }, bash(command))).toBe(expected);
  });

  it('path patterns deny the file tools that name a matching path; a Read pattern covers searches too', () => {
    const deny = { disallowedTools: ['Read(/secrets/**)', 'Edit(/src/generated/**)'] };
    expect(verdict(deny, file('read_file', 'secrets/key.pem'))).toBe('deny');
    expect(verdict(deny, file('grep', 'secrets'))).toBe('allow');
    expect(verdict(deny, file('grep', 'secrets/a'))).toBe('deny');
    expect(verdict(deny, file('list_files', '/repo/secrets/x'))).toBe('deny');
    expect(verdict(deny, file('read_file', 'src/a.ts'))).toBe('allow');
    expect(verdict(deny, file('edit_file', 'src/generated/api.ts'))).toBe('deny');
    expect(verdict(deny, file('create_file', 'src/generated/new.ts'))).toBe('deny');
    expect(verdict(deny, file('edit_file', 'src/api.ts'))).toBe('allow');
  });

  it('a deny wins over an allow, and names the rule', () => {
    const d = perms({ allowedTools: ['Bash'], disallowedTools: ['Bash(git push:*)'] }).decide(bash('git push'));
    expect(d).toEqual({
      allowed: false,
      reason: 'Permission denied: execute_command (git push) is not permitted: --disallowedTools "Bash(git push:*)" forbids it. It was not run; do the task without it.',
    });
    expect(verdict({ allowedTools: ['Bash'], disallowedTools: ['Bash(git push:*)'], permissionMode: 'bypassPermissions' }, bash('git push'))).toBe('deny');
  });

  it('rules for tools we have no counterpart of are accepted without effect, and listed', () => {
    const p = perms({ disallowedTools: ['WebFetch', 'WebSearch(x)'], allowedTools: ['Bash', 'Task(Explore)'] });
    expect(p.ignored).toEqual(['Task(Explore)', 'WebFetch', 'WebSearch(x)']);
    expect(p.decide(bash('ls'))).toEqual({ allowed: true });
  });
});

describe('--permission-mode plan', () => {
  it.each<[SessionExtras, { name: string; input: Record<string, unknown> }, 'allow' | 'deny']>([
    [{ permissionMode: 'plan' }, file('create_file', 'a'), 'deny'],
    [{ permissionMode: 'plan' }, file('edit_file', 'a'), 'deny'],
    [{ permissionMode: 'plan' }, { name: 'spawn_thread', input: {} }, 'deny'],
    [{ permissionMode: 'plan' }, { name: 'mcp__github__create_issue', input: {} }, 'deny'],
    [{ permissionMode: 'plan' }, bash('npm test'), 'allow'],
    [{ permissionMode: 'plan' }, file('read_file', 'a'), 'allow'],
    [{ permissionMode: 'plan' }, file('grep'), 'allow'],
    [{ permissionMode: 'plan', allowedTools: ['Edit', 'Task'] }, file('edit_file', 'a'), 'deny'],
    [{ permissionMode: 'plan', allowedTools: ['Edit', 'Task'] }, { name: 'spawn_thread', input: {} }, 'deny'],
    [{ permissionMode: 'plan', allowedTools: ['mcp__github'] }, { name: 'mcp__github__search', input: {} }, 'allow'],
    [{ permissionMode: 'plan', allowedTools: ['Read'] }, bash('npm test'), 'deny'],
  ])('%j: %j is %s', (extras, call, expected) => {
    expect(verdict(extras, call)).toBe(expected);
  });

  it('says the session is read-only and what to do instead', () => {
    const d = perms({ permissionMode: 'plan' }).decide(file('edit_file', 'src/a.ts'));
    expect(d.allowed).toBe(false);
    expect(!d.allowed && d.reason).toBe(
      'Permission denied: edit_file (src/a.ts) is not permitted: the session runs with --permission-mode plan, which is read-only ' +
        '(no file edits, no child threads). Nothing was changed. Investigate with reads and commands, then present your plan.',
    );
    expect(perms({ permissionMode: 'plan' }).active).toBe(true);
  });
});

describe('command matching on its own', () => {
  it.each<[string, string, boolean]>([
    ['ls', 'ls', true],
    ['ls:*', 'ls -la && ls', true],
    ['ls:*', 'ls\nrm x', false],
    ['ls:*', 'ls <(rm x)', false],
  ])('allow spec %s on %j: %s', (spec, command, allowed) => {
    expect(commandAllowed([spec], command)).toBe(allowed);
  });

  it.each<[string, string, boolean]>([
    ['rm:*', 'ls\nrm x', true],
    ['rm:*', 'env -i rm x', true],
    ['rm:*', 'nohup rm x &', true],
    ['rm:*', 'echo rm', false],
  ])('deny spec %s on %j: %s', (spec, command, denied) => {
    expect(commandDenied(spec, command)).toBe(denied);
  });
});

describe("the run's tally", () => {
  it("records every thread's denied calls as Claude Code's permission_denials", () => {
    const t = newTally();
    tallyEvent(t, { type: 'tool-call', threadId: 'root', call: { id: 'toolu_1', name: 'execute_command', input: { command: 'ls' } }, sync: true }, 'root');
    tallyEvent(t, { type: 'tool-denied', threadId: 'root', call: { id: 'toolu_1', name: 'execute_command', input: { command: 'ls' } }, reason: 'no' }, 'root');
    tallyEvent(t, { type: 'tool-denied', threadId: 'child', call: { id: 'toolu_2', name: 'edit_file', input: { path: 'a' } }, reason: 'no' }, 'root');
    expect(t.permissionDenials).toEqual([
      { tool_name: 'execute_command', tool_use_id: 'toolu_1', tool_input: { command: 'ls' } },
      { tool_name: 'edit_file', tool_use_id: 'toolu_2', tool_input: { path: 'a' } },
    ]);
  });
});
