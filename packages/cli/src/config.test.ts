import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { DEFAULT_CONFIG, loadConfig, type Config } from './config.js';
import { UserError } from './exit-codes.js';
import { containmentOf, DEFAULT_SANDBOX_CONFIG, maxDiffFileBytes, narrowSandboxConfig, parseNetworkFlag } from './sandbox-config.js';
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
    expect(c.maxToolCallsPerReply).toBe(16);
    write(join(project, '.infinity', 'config.json'), '{"maxToolCallsPerReply": 4}');
    expect(loadConfig({ env: { HOME: home }, projectRoot: project }).maxToolCallsPerReply).toBe(4);
  });

  it.each([
    ['{not json', /not valid JSON/],
    ['[1, 2]', /must hold a JSON object/],
    ['{"contextWindow": "big"}', /"contextWindow" must be a whole number/],
    ['{"modle": "x"}', /unknown key "modle"/],
    ['{"maxToolCallsPerReply": 0}', /"maxToolCallsPerReply" must be a whole number of calls, at least 1/],
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

/** The UserError loadConfig throws (the test fails when it throws none). */
function configError(home: string, project: string): UserError {
  try {
    loadConfig({ env: { HOME: home }, projectRoot: project });
  } catch (err) {
    expect(err).toBeInstanceOf(UserError);
    return err as UserError;
  }
  return expect.unreachable('the config was accepted');
}

describe('config: sandbox', () => {
  const userFile = (home: string) => join(home, '.config', 'infinity-code', 'config.json');
  const projectFile = (project: string) => join(project, '.infinity', 'config.json');

  it('defaults: no network, nothing extra writable, hidden or let through, commands stopped after 30 minutes', () => {
    const c = loadConfig({ env: { HOME: temp() }, projectRoot: temp() });
    expect(c.sandbox).toEqual({
      network: 'off',
      networkExtraPorts: [],
      networkPrivateAddresses: false,
      writable: [],
      hidden: [],
      readable: [],
      envAllow: [],
      limits: {},
      commandTimeoutMs: 1_800_000,
    });
    expect(containmentOf(c.sandbox)).toEqual({ network: 'off', writable: [], hidden: [], readable: [] });
    expect(maxDiffFileBytes(c.sandbox)).toBeUndefined();
  });

  it('reads every key, and the project file overrides the user file key by key', () => {
    const home = temp();
    const project = temp();
    write(
      userFile(home),
      JSON.stringify({
        sandbox: {
          network: ['Registry.npmjs.org', 'github.com'],
          networkExtraPorts: [8443, 4873, 8443],
          networkPrivateAddresses: true,
          writable: ['/var/cache/tool/'],
          hidden: ['/srv/private'],
          readable: ['/home/me/.gitconfig'],
          envAllow: ['GITHUB_TOKEN'],
          limits: { processes: 64, memoryMB: 512, diskMB: 2048 },
          commandTimeoutMs: 60_000,
          maxFileMB: 2,
        },
      }),
    );
    write(projectFile(project), JSON.stringify({ sandbox: { network: ['api.github.com'], limits: { fileSizeMB: 10 }, commandTimeoutMs: 5_000 } }));
    const c = loadConfig({ env: { HOME: home }, projectRoot: project });
    expect(c.sandbox).toEqual({
      network: { allow: ['api.github.com'] },
      networkExtraPorts: [8443, 4873],
      networkPrivateAddresses: true,
      writable: ['/var/cache/tool'],
      hidden: ['/srv/private'],
      readable: ['/home/me/.gitconfig'],
      envAllow: ['GITHUB_TOKEN'],
      limits: { processes: 64, memoryMB: 512, fileSizeMB: 10, diskMB: 2048 },
      commandTimeoutMs: 5_000,
      maxFileMB: 2,
    });
    expect(containmentOf(c.sandbox)).toEqual({
      network: { allow: ['api.github.com'], extraPorts: [8443, 4873], privateAddresses: true },
      writable: ['/var/cache/tool'],
      hidden: ['/srv/private'],
      readable: ['/home/me/.gitconfig'],
      limits: { processes: 64, memoryBytes: 512 * 1024 * 1024, fileSizeBytes: 10 * 1024 * 1024, diskBytes: 2048 * 1024 * 1024 },
    });
    // The --network flag overrides both files; the proxy's ports and addresses go with its domains.
    expect(containmentOf(c.sandbox, 'on').network).toBe('on');
    expect(containmentOf(c.sandbox, { allow: ['example.org'] }).network).toEqual({ allow: ['example.org'], extraPorts: [8443, 4873], privateAddresses: true });
    expect(maxDiffFileBytes(c.sandbox)).toBe(2 * 1024 * 1024);
  });

  it.each([
    ['"open"', /"sandbox" must be an object/],
    ['{"network": "maybe"}', /"sandbox.network" must be "off", "on" or a list of domains/],
    ['{"network": ["https://example.com/x"]}', /"sandbox.network" must be .*is a URL; give the domain alone/],
    ['{"network": ["*.example.com"]}', /"sandbox.network" must be .*write example.com, which covers its subdomains/],
    ['{"network": ["bad domain"]}', /"sandbox.network" must be .*"bad domain" is not a domain name/],
    ['{"writable": ["relative/dir"]}', /"sandbox.writable" must be a list of absolute paths \("relative\/dir" is relative\)/],
    ['{"hidden": "/srv"}', /"sandbox.hidden" must be a list of absolute paths/],
    ['{"envAllow": ["NOT-A-NAME"]}', /"sandbox.envAllow" must be a list of environment variable names \("NOT-A-NAME" is not one\)/],
    ['{"envAllow": ["ANTHROPIC_API_KEY"]}', /"sandbox.envAllow" must be .*the agent's own credential, which commands never get/],
    ['{"limits": {"cpus": 2}}', /unknown key "sandbox.limits.cpus". Known keys of "sandbox.limits": processes, memoryMB, fileSizeMB, diskMB/],
    ['{"limits": {"diskMB": 0.5}}', /"sandbox.limits.diskMB" must be a whole number, 1 or more/],
    ['{"limits": {"processes": 0}}', /"sandbox.limits.processes" must be a whole number, 1 or more/],
    ['{"limits": [1]}', /"sandbox.limits" must be an object/],
    ['{"commandTimeoutMs": 0}', /"sandbox.commandTimeoutMs" must be a whole number of milliseconds/],
    ['{"commandTimeoutMs": "30m"}', /"sandbox.commandTimeoutMs" must be a whole number of milliseconds/],
    ['{"maxFileMB": -1}', /"sandbox.maxFileMB" must be a number of megabytes above 0/],
    ['{"networkExtraPorts": 8443}', /"sandbox.networkExtraPorts" must be a list of port numbers from 1 to 65535, like \[8443\]/],
    ['{"networkExtraPorts": [0]}', /"sandbox.networkExtraPorts" must be a list of port numbers/],
    ['{"networkExtraPorts": [65536]}', /"sandbox.networkExtraPorts" must be a list of port numbers/],
    ['{"networkExtraPorts": ["22"]}', /"sandbox.networkExtraPorts" must be a list of port numbers/],
    ['{"networkPrivateAddresses": "yes"}', /"sandbox.networkPrivateAddresses" must be true or false/],
    [
      '{"netwrok": "off"}',
      /unknown key "sandbox.netwrok". Known keys of "sandbox": network, networkExtraPorts, networkPrivateAddresses, writable, hidden, readable, envAllow, limits, commandTimeoutMs, maxFileMB/,
    ],
  ])('rejects sandbox %s with a config error naming the file and key', (sandbox, message) => {
    const home = temp();
    write(userFile(home), `{"sandbox": ${sandbox}}`);
    const err = configError(home, temp());
    expect(err.exitCode).toBe(3);
    expect(err.message).toMatch(message);
    expect(err.message).toContain(userFile(home));
  });

  it.each([
    [{}, { network: 'on' }, /"sandbox.network" widens .*beyond your own setting \(off\)/],
    [{}, { network: ['example.com'] }, /"sandbox.network" widens/],
    [{ network: ['github.com'] }, { network: ['npmjs.org'] }, /"sandbox.network" widens .*\(github.com\)/],
    [{}, { writable: ['/home'] }, /"sandbox.writable" widens .*\/home is not writable in your own config/],
    [{ writable: ['/var/cache'] }, { writable: ['/var/cachex'] }, /"sandbox.writable" widens/],
    [{}, { readable: ['/home/me'] }, /"sandbox.readable" widens .*\/home\/me is not readable in your own config/],
    [{ readable: ['/home/me/notes'] }, { readable: ['/home/me'] }, /"sandbox.readable" widens/],
    [{}, { envAllow: ['GITHUB_TOKEN'] }, /"sandbox.envAllow" widens .*GITHUB_TOKEN is not let through in your own config/],
    [{}, { networkExtraPorts: [22] }, /"sandbox.networkExtraPorts" widens .*port 22 is not among your own networkExtraPorts/],
    [{ networkExtraPorts: [8443] }, { networkExtraPorts: [8443, 22] }, /"sandbox.networkExtraPorts" widens .*port 22/],
    [{}, { networkPrivateAddresses: true }, /"sandbox.networkPrivateAddresses" widens .*keeps the proxy from loopback, private and link-local addresses/],
    [{ networkPrivateAddresses: false }, { networkPrivateAddresses: true }, /"sandbox.networkPrivateAddresses" widens/],
  ])('a project file may not widen the user\'s settings: user %j, project %j', (user, project, message) => {
    const home = temp();
    const root = temp();
    write(userFile(home), JSON.stringify({ sandbox: user }));
    write(projectFile(root), JSON.stringify({ sandbox: project }));
    const err = configError(home, root);
    expect(err.exitCode).toBe(3);
    expect(err.message).toMatch(message);
    expect(err.message).toContain(projectFile(root));
    expect(err.message).toContain(`Put the setting in your own config, ${userFile(home)}`);
  });

  it('a project file may narrow them', () => {
    const home = temp();
    const root = temp();
    write(userFile(home), JSON.stringify({ sandbox: { network: ['github.com'], writable: ['/var/cache'], envAllow: ['A_TOKEN', 'B_TOKEN'] } }));
    write(
      projectFile(root),
      JSON.stringify({ sandbox: { network: ['api.github.com'], writable: ['/var/cache/npm'], envAllow: ['B_TOKEN'], hidden: ['/opt/x'] } }),
    );
    const c = loadConfig({ env: { HOME: home }, projectRoot: root });
    expect(c.sandbox).toMatchObject({ network: { allow: ['api.github.com'] }, writable: ['/var/cache/npm'], envAllow: ['B_TOKEN'], hidden: ['/opt/x'] });
    write(projectFile(root), JSON.stringify({ sandbox: { network: 'off' } }));
    expect(loadConfig({ env: { HOME: home }, projectRoot: root }).sandbox.network).toBe('off');
  });

  it.each([
    // key, the user's file, the repository's file, what the session gets
    ['sandbox.readable: a subset of yours applies', { sandbox: { readable: ['/home/me/notes'] } }, { sandbox: { readable: ['/home/me/notes/a'] } }, (c: Config) => expect(c.sandbox.readable).toEqual(['/home/me/notes/a'])],
    ['sandbox.hidden: a union', { sandbox: { hidden: ['/opt/user-secret'] } }, { sandbox: { hidden: ['/opt/repo'] } }, (c: Config) => expect(c.sandbox.hidden).toEqual(['/opt/user-secret', '/opt/repo'])],
    ['secretEnv: a union', { secretEnv: ['MY_SECRET'] }, { secretEnv: ['REPO_VAR'] }, (c: Config) => expect(c.secretEnv).toEqual(['MY_SECRET', 'REPO_VAR'])],
    ['limits.processes: the lower, against the built-in default', {}, { sandbox: { limits: { processes: 30000 } } }, (c: Config) => expect(c.sandbox.limits.processes).toBe(1024)],
    ['limits.processes: a lower one applies', { sandbox: { limits: { processes: 500 } } }, { sandbox: { limits: { processes: 64 } } }, (c: Config) => expect(c.sandbox.limits.processes).toBe(64)],
    ['limits.memoryMB: the lower', { sandbox: { limits: { memoryMB: 512 } } }, { sandbox: { limits: { memoryMB: 100000 } } }, (c: Config) => expect(c.sandbox.limits.memoryMB).toBe(512)],
    ['limits.fileSizeMB: the lower, against the built-in default', {}, { sandbox: { limits: { fileSizeMB: 1e9 } } }, (c: Config) => expect(c.sandbox.limits.fileSizeMB).toBe(4096)],
    ['limits.diskMB: the lower, against the built-in default', {}, { sandbox: { limits: { diskMB: 1e9 } } }, (c: Config) => expect(c.sandbox.limits.diskMB).toBe(10240)],
    ['limits.diskMB: a lower one applies', { sandbox: { limits: { diskMB: 4096 } } }, { sandbox: { limits: { diskMB: 100 } } }, (c: Config) => expect(c.sandbox.limits.diskMB).toBe(100)],
    ['limits.diskMB: not raised above yours', { sandbox: { limits: { diskMB: 2048 } } }, { sandbox: { limits: { diskMB: 50000 } } }, (c: Config) => expect(c.sandbox.limits.diskMB).toBe(2048)],
    ['commandTimeoutMs: the lower', {}, { sandbox: { commandTimeoutMs: 99 * 3600_000 } }, (c: Config) => expect(c.sandbox.commandTimeoutMs).toBe(30 * 60_000)],
    ['maxFileMB: the lower, against the built-in default', {}, { sandbox: { maxFileMB: 5000 } }, (c: Config) => expect(c.sandbox.maxFileMB).toBe(20)],
    ['maxFileMB: a lower one applies', { sandbox: { maxFileMB: 50 } }, { sandbox: { maxFileMB: 2 } }, (c: Config) => expect(c.sandbox.maxFileMB).toBe(2)],
    ['networkExtraPorts: a subset of yours applies', { sandbox: { networkExtraPorts: [8443, 4873] } }, { sandbox: { networkExtraPorts: [4873] } }, (c: Config) => expect(c.sandbox.networkExtraPorts).toEqual([4873])],
    ['networkExtraPorts: none at all', { sandbox: { networkExtraPorts: [8443] } }, { sandbox: { networkExtraPorts: [] } }, (c: Config) => expect(c.sandbox.networkExtraPorts).toEqual([])],
    ['networkExtraPorts: yours where it sets none', { sandbox: { networkExtraPorts: [8443] } }, { sandbox: { network: 'off' } }, (c: Config) => expect(c.sandbox.networkExtraPorts).toEqual([8443])],
    ['networkPrivateAddresses: it may turn yours off', { sandbox: { networkPrivateAddresses: true } }, { sandbox: { networkPrivateAddresses: false } }, (c: Config) => expect(c.sandbox.networkPrivateAddresses).toBe(false)],
    ['networkPrivateAddresses: yours where it sets none', { sandbox: { networkPrivateAddresses: true } }, { sandbox: {} }, (c: Config) => expect(c.sandbox.networkPrivateAddresses).toBe(true)],
    ['networkPrivateAddresses: true only if yours is', { sandbox: { networkPrivateAddresses: true } }, { sandbox: { networkPrivateAddresses: true } }, (c: Config) => expect(c.sandbox.networkPrivateAddresses).toBe(true)],
  ] as const)("a repository's config only narrows %s", (_key, user, project, check) => {
    const home = temp();
    const root = temp();
    write(userFile(home), JSON.stringify(user));
    write(projectFile(root), JSON.stringify(project));
    check(loadConfig({ env: { HOME: home }, projectRoot: root }));
  });

  it("narrowing alone never widens the proxy's reach, whatever the repository's file says", () => {
    const user = { ...DEFAULT_SANDBOX_CONFIG, network: { allow: ['example.org'] }, networkExtraPorts: [8443] };
    const narrowed = narrowSandboxConfig(user, { networkExtraPorts: [22, 8443], networkPrivateAddresses: true });
    expect(narrowed.networkExtraPorts).toEqual([8443]);
    expect(narrowed.networkPrivateAddresses).toBe(false);
  });

  it("the user's own file still replaces the defaults (raising a limit is theirs to do)", () => {
    const home = temp();
    write(userFile(home), JSON.stringify({ sandbox: { limits: { processes: 4096 }, maxFileMB: 100 }, secretEnv: ['X'] }));
    const c = loadConfig({ env: { HOME: home }, projectRoot: temp() });
    expect(c.sandbox.limits.processes).toBe(4096);
    expect(c.sandbox.maxFileMB).toBe(100);
    expect(c.secretEnv).toEqual(['X']);
  });

  it('--network values', () => {
    expect(parseNetworkFlag('off')).toBe('off');
    expect(parseNetworkFlag('ON')).toBe('on');
    expect(parseNetworkFlag('registry.npmjs.org, GitHub.com')).toEqual({ allow: ['registry.npmjs.org', 'github.com'] });
    for (const bad of ['https://x.org', 'a b', 'x.org:443']) {
      try {
        parseNetworkFlag(bad);
        expect.unreachable();
      } catch (err) {
        expect(err).toBeInstanceOf(UserError);
        expect((err as UserError).exitCode).toBe(2);
        expect((err as UserError).message).toMatch(/^--network: .*Give off, on, or domains separated by commas\.$/);
      }
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
