import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { DEFAULT_CONFIG, loadConfig } from './config.js';
import { UserError } from './exit-codes.js';
import { SessionRegistry } from './sessions.js';

const dirs: string[] = [];
const temp = () => {
  const d = mkdtempSync(join(tmpdir(), 'ic-config-'));
  dirs.push(d);
  return d;
};
afterEach(() => dirs.splice(0).forEach((d) => rmSync(d, { recursive: true, force: true })));

function write(file: string, text: string) {
  mkdirSync(join(file, '..'), { recursive: true });
  writeFileSync(file, text);
}

describe('config', () => {
  it('uses defaults, then the user file, then the project file', () => {
    const home = temp();
    const project = temp();
    expect(loadConfig({ env: { HOME: home }, projectRoot: project })).toEqual(DEFAULT_CONFIG);
    write(join(home, '.config', 'infinity-code', 'config.json'), '{"model": "user-model", "contextWindow": 1000}');
    write(join(project, '.infinity', 'config.json'), '{"model": "project-model"}');
    const c = loadConfig({ env: { HOME: home }, projectRoot: project });
    expect(c.model).toBe('project-model');
    expect(c.contextWindow).toBe(1000);
  });

  it.each([
    ['{not json', /not valid JSON/],
    ['[1, 2]', /must hold a JSON object/],
    ['{"contextWindow": "big"}', /"contextWindow" must be a whole number/],
    ['{"modle": "x"}', /unknown key "modle"/],
  ])('rejects %s with a config error naming the file', (text, message) => {
    const project = temp();
    const file = join(project, '.infinity', 'config.json');
    write(file, text);
    try {
      loadConfig({ env: { HOME: temp() }, projectRoot: project });
      expect.unreachable();
    } catch (err) {
      expect(err).toBeInstanceOf(UserError);
      expect((err as UserError).exitCode).toBe(3);
      expect((err as UserError).message).toMatch(message);
      expect((err as UserError).message).toContain(file);
    }
  });
});

describe('sessions', () => {
  it('lists newest first, finds by prefix and survives a reopen', () => {
    const dir = temp();
    const reg = new SessionRegistry(dir);
    const a = reg.create('first task\nwith details');
    const b = reg.create('second task');
    expect(reg.latest()!.id).toBe(b.id);
    reg.touch(a.id);
    const again = new SessionRegistry(dir);
    expect(again.latest()!.id).toBe(a.id);
    expect(again.find(a.id.slice(0, 8)).title).toBe('first task');
    expect(() => again.find('zzzz')).toThrow(/No session zzzz/);
  });
});
