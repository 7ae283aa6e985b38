// Choosing the model and its effort: --model, ANTHROPIC_MODEL, the config, aliases, retired
// models refused before anything is sent, effort levels the model accepts; and the credentials.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ScriptedProvider } from '@infinity-code/runtime';
import { DEFAULT_MODEL } from '@infinity-code/runtime/models';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from './config.js';
import { chooseEffort, effortProblem, effortText, parseEffortArg } from './effort.js';
import { UserError } from './exit-codes.js';
import { chooseModel, contextWindowFor, modelsText, retiredModelMessage } from './model-choice.js';
import { BUILT_IN_PRICING, Pricing } from './pricing.js';
import { anthropicEnv } from './provider-env.js';
import { setUpSession, type SessionRequest } from './session-setup.js';

const dirs: string[] = [];
const temp = () => {
  const d = mkdtempSync(join(tmpdir(), 'ic-models-'));
  dirs.push(d);
  return d;
};
afterEach(() => dirs.splice(0).forEach((d) => rmSync(d, { recursive: true, force: true })));

const write = (file: string, value: unknown) => {
  mkdirSync(join(file, '..'), { recursive: true });
  writeFileSync(file, JSON.stringify(value));
};
const userFile = (home: string) => join(home, '.config', 'infinity-code', 'config.json');
const projectFile = (repo: string) => join(repo, '.infinity', 'config.json');

/** The UserError `f` throws (the test fails when it throws none). */
function userError(f: () => unknown): UserError {
  try {
    f();
  } catch (err) {
    expect(err).toBeInstanceOf(UserError);
    return err as UserError;
  }
  return expect.unreachable('no error was thrown');
}

describe('chooseModel', () => {
  it('takes --model, then ANTHROPIC_MODEL, then the config; aliases become ids', () => {
    expect(chooseModel({ flag: 'opus', env: { ANTHROPIC_MODEL: 'haiku' }, config: 'fable' })).toBe('claude-opus-5-5');
    expect(chooseModel({ env: { ANTHROPIC_MODEL: 'haiku' }, config: 'fable' })).toBe('claude-haiku-5-5');
    expect(chooseModel({ env: {}, config: 'fable' })).toBe('claude-fable-5-2');
    expect(chooseModel({ env: { ANTHROPIC_MODEL: '' }, config: 'sonnet' })).toBe('claude-sonnet-5-5');
    expect(chooseModel({ env: {}, config: DEFAULT_MODEL })).toBe('claude-sonnet-5-5');
  });

  it('lets an id the table does not know through as written, and keeps a dated id', () => {
    expect(chooseModel({ flag: 'team-llm', env: {}, config: DEFAULT_MODEL })).toBe('team-llm');
    expect(chooseModel({ env: { ANTHROPIC_MODEL: 'claude-haiku-4-5-20251001' }, config: DEFAULT_MODEL })).toBe('claude-haiku-4-5-20251001');
  });

  it('refuses a retired model with its retirement date, its replacement and how to choose it (exit 3)', () => {
    const flag = userError(() => chooseModel({ flag: 'claude-sonnet-4-5', env: { ANTHROPIC_MODEL: 'opus' }, config: DEFAULT_MODEL }));
    expect(flag.exitCode).toBe(3);
    expect(flag.message).toBe(
      '--model claude-sonnet-4-5 names Claude Sonnet 4.5, retired on 2026-11-30: requests to it fail. Its replacement is ' +
        'claude-sonnet-5-5 (Claude Sonnet 5.5): run with --model claude-sonnet-5-5 (or --model sonnet).',
    );
    // A dated id of a retired model is retired too.
    const env = userError(() => chooseModel({ env: { ANTHROPIC_MODEL: 'claude-opus-4-20250514' }, config: DEFAULT_MODEL }));
    expect(env.exitCode).toBe(3);
    expect(env.message).toContain('ANTHROPIC_MODEL=claude-opus-4-20250514 names Claude Opus 4, retired on 2026-06-15: requests to it fail.');
    expect(env.message).toContain('export ANTHROPIC_MODEL=claude-opus-5-5 (or opus), or unset ANTHROPIC_MODEL');
  });

  it("refuses a retired model in a config file, naming the file, even where --model would win (the file needs fixing)", () => {
    const home = temp();
    write(userFile(home), { model: 'claude-sonnet-4-5-20250929' });
    const err = userError(() => loadConfig({ env: { HOME: home }, projectRoot: temp() }));
    expect(err.exitCode).toBe(3);
    expect(err.message).toContain(`In ${userFile(home)}, "model": "claude-sonnet-4-5-20250929" names Claude Sonnet 4.5, retired on 2026-11-30`);
    expect(err.message).toContain('set "model": "claude-sonnet-5-5" (or "sonnet"), or remove the key');
  });

  it('in the TUI, says the same and that the model stays', () => {
    expect(retiredModelMessage('claude-opus-4-1', { kind: 'tui', current: 'claude-opus-5-5' })).toBe(
      '/model claude-opus-4-1 names Claude Opus 4.1, retired on 2026-06-15: requests to it fail. Its replacement is claude-opus-5-5 ' +
        '(Claude Opus 5.5): switch with /model claude-opus-5-5 (or /model opus). The model is still claude-opus-5-5.',
    );
    // Current, legacy and unknown models are not retired.
    for (const name of ['claude-haiku-5-5', 'claude-opus-4-5', 'claude-opus-5', 'team-llm']) expect(retiredModelMessage(name, { kind: 'flag' })).toBeUndefined();
  });

  it("/model lists the table's current models with alias and price, the user's prices winning", () => {
    const text = modelsText('claude-opus-5-5', BUILT_IN_PRICING);
    const lines = text.split('\n');
    expect(lines[0]).toBe('Model: claude-opus-5-5 (Claude Opus 5.5). Switch with /model <alias|id>. Current models (USD per million tokens):');
    expect(lines.slice(1)).toEqual([
      expect.stringMatching(/^ {2}claude-sonnet-5-5\s+sonnet\s+Claude Sonnet 5\.5\s+\$2 in \/ \$10 out$/),
      expect.stringMatching(/^\* claude-opus-5-5\s+opus\s+Claude Opus 5\.5\s+\$4 in \/ \$20 out$/),
      expect.stringMatching(
        /^ {2}claude-haiku-5-5\s+haiku\s+Claude Haiku 5\.5\s+\$0\.10 in \/ \$0\.50 out \(prompts up to 100K tokens\), \$0\.50 in \/ \$2\.50 out above$/,
      ),
      expect.stringMatching(/^ {2}claude-fable-5-2\s+fable\s+Claude Fable 5\.2\s+\$8 in \/ \$40 out$/),
    ]);
    expect(modelsText('team-llm', new Pricing({ user: { fable: { input: 7.5, output: 30 } } }))).toMatch(
      /^Model: team-llm\. [\s\S]*claude-fable-5-2\s+fable\s+Claude Fable 5\.2\s+\$7\.50 in \/ \$30 out$/m,
    );
  });
});

describe('effort', () => {
  it('accepts the levels the table lists for the model, and any level for a model it does not know', () => {
    expect(effortProblem('max', 'claude-sonnet-5-5')).toBeUndefined();
    expect(effortProblem('low', 'team-llm')).toBeUndefined();
    // Legacy models without effort support refuse every level.
    expect(effortProblem('low', 'claude-opus-4-8')).toBe('claude-opus-4-8 does not accept effort low: it accepts no effort level.');
  });

  it('refuses a level the model does not accept: a usage error for --effort, a config error naming the file for the config', () => {
    expect(chooseEffort({ flag: 'xhigh', config: 'low', model: 'claude-opus-5-5' })).toBe('xhigh');
    expect(chooseEffort({ config: 'low', configFile: 'c.json', model: 'claude-opus-5-5' })).toBe('low');
    expect(chooseEffort({ model: 'claude-opus-5-5' })).toBeUndefined();
    const flag = userError(() => chooseEffort({ flag: 'high', model: 'claude-haiku-4-5' }));
    expect(flag.exitCode).toBe(2);
    expect(flag.message).toMatch(/^--effort high: claude-haiku-4-5 does not accept effort high: it accepts no effort level\./);
    const config = userError(() => chooseEffort({ config: 'max', configFile: '/home/u/c.json', model: 'claude-opus-4-8' }));
    expect(config.exitCode).toBe(3);
    expect(config.message).toMatch(/^In \/home\/u\/c\.json, "effort" is max, but the session's model claude-opus-4-8 does not accept effort max/);
  });

  it("/effort shows the level, or the model's default (from the table) when none is set, and the levels it accepts", () => {
    expect(effortText('claude-opus-5-5', undefined)).toBe(
      "Effort: the model's default, medium (none is sent). claude-opus-5-5 accepts low, medium, high, xhigh, max; its default is medium. " +
        "Set it with /effort <level>, or /effort default for the model's own.",
    );
    expect(effortText('claude-sonnet-5-5', 'low')).toMatch(/^Effort: low\. claude-sonnet-5-5 accepts low, medium, high, xhigh, max; its default is high\./);
    expect(parseEffortArg('xhigh')).toEqual({ effort: 'xhigh' });
    expect(parseEffortArg('default')).toEqual({ effort: undefined });
    expect(parseEffortArg('ultra')).toEqual({ error: `Unknown effort level "ultra". Levels: low, medium, high, xhigh, max, or default for the model's own.` });
  });
});

describe('setUpSession: the model and effort a session runs with', () => {
  const repo = () => {
    const dir = temp();
    execFileSync('git', ['init', '-q', dir]);
    return dir;
  };
  const setup = (r: Partial<SessionRequest> & { cwd: string; env: NodeJS.ProcessEnv }) =>
    setUpSession({ title: 't', provider: new ScriptedProvider(() => ({ text: 'hi' })), ...r });

  it('--model beats ANTHROPIC_MODEL, which beats the config, which beats the default; each may be an alias', () => {
    const cwd = repo();
    const home = temp();
    expect(setup({ cwd, env: { HOME: home } }).model).toBe(DEFAULT_MODEL);
    write(userFile(home), { model: 'haiku' });
    expect(setup({ cwd, env: { HOME: home } }).model).toBe('claude-haiku-5-5');
    write(projectFile(cwd), { model: 'fable' });
    expect(setup({ cwd, env: { HOME: home } }).model).toBe('claude-fable-5-2');
    expect(setup({ cwd, env: { HOME: home, ANTHROPIC_MODEL: 'opus' } }).model).toBe('claude-opus-5-5');
    expect(setup({ cwd, env: { HOME: home, ANTHROPIC_MODEL: 'opus' }, model: 'sonnet' }).model).toBe('claude-sonnet-5-5');
  });

  it('takes the effort from --effort, else the config, checked against the chosen model', () => {
    const cwd = repo();
    const home = temp();
    expect(setup({ cwd, env: { HOME: home } }).effort).toBeUndefined();
    write(userFile(home), { effort: 'low' });
    expect(setup({ cwd, env: { HOME: home } }).effort).toBe('low');
    expect(setup({ cwd, env: { HOME: home }, effort: 'max' }).effort).toBe('max');
    // The config's level and a model that takes none: the config is named.
    const err = userError(() => setup({ cwd, env: { HOME: home }, model: 'claude-opus-4-8' }));
    expect(err.exitCode).toBe(3);
    expect(err.message).toContain(`In ${userFile(home)}, "effort" is low`);
    write(userFile(home), { effort: 'maximum' });
    expect(userError(() => setup({ cwd, env: { HOME: home } })).message).toContain('"effort" must be one of low, medium, high, xhigh, max');
  });

  it('refuses a retired --model before anything opens', () => {
    const err = userError(() => setup({ cwd: repo(), env: { HOME: temp() }, model: 'claude-sonnet-4-5' }));
    expect(err.exitCode).toBe(3);
    expect(err.message).toContain('--model claude-sonnet-4-5 names Claude Sonnet 4.5, retired on 2026-11-30');
  });
});

describe('credentials', () => {
  it('takes an API key, a bearer token (ANTHROPIC_AUTH_TOKEN), or both', () => {
    expect(anthropicEnv({ ANTHROPIC_API_KEY: 'k' })).toEqual({ apiKey: 'k' });
    expect(anthropicEnv({ ANTHROPIC_AUTH_TOKEN: 't', ANTHROPIC_BASE_URL: 'http://127.0.0.1:9' })).toEqual({ authToken: 't', baseURL: 'http://127.0.0.1:9' });
    expect(anthropicEnv({ ANTHROPIC_API_KEY: 'k', ANTHROPIC_AUTH_TOKEN: 't' })).toEqual({ apiKey: 'k', authToken: 't' });
  });

  it('names both variables when neither is set (exit 3)', () => {
    const err = userError(() => anthropicEnv({ ANTHROPIC_API_KEY: '', ANTHROPIC_AUTH_TOKEN: '' }));
    expect(err.exitCode).toBe(3);
    expect(err.message).toMatch(/^Neither ANTHROPIC_API_KEY nor ANTHROPIC_AUTH_TOKEN is set\./);
    expect(err.message).toContain('export ANTHROPIC_AUTH_TOKEN=');
  });
});

describe('contextWindowFor', () => {
  it("is the model table's window unless the config sets one", () => {
    expect(contextWindowFor('claude-sonnet-5-5', {})).toBe(1_000_000);
    expect(contextWindowFor('sonnet', {})).toBe(1_000_000);
    expect(contextWindowFor('claude-haiku-4-5', {})).toBe(200_000);
    expect(contextWindowFor('gateway/unknown-model', {})).toBe(200_000);
    expect(contextWindowFor('claude-sonnet-5-5', { contextWindow: 300_000 })).toBe(300_000);
  });
});
