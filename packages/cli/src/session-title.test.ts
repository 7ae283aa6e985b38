// A TUI session is named after the first message the user sends in it, as a headless one is
// named after its task.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LocalSystem, MemoryStore, ScriptedProvider } from '@infinity-code/runtime';
import { DEFAULT_MODEL } from '@infinity-code/runtime/models';
import { afterEach, describe, expect, it } from 'vitest';
import { SessionRegistry } from './sessions.js';
import { localController } from './tui/local-controller.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function registry(): SessionRegistry {
  const d = mkdtempSync(join(tmpdir(), 'ic-titles-'));
  dirs.push(d);
  return new SessionRegistry(d);
}

describe('session titles', () => {
  it('retitle names a session after the first line of a text, trimmed and bounded; blank text changes nothing', () => {
    const r = registry();
    const s = r.create('interactive session');
    const other = r.create('Fix the parser');
    r.retitle(s.id, '\n   Make the login form remember the user  \nwith a checkbox');
    expect(r.get(s.id)?.title).toBe('Make the login form remember the user');
    r.retitle(s.id, '   \n');
    expect(r.get(s.id)?.title).toBe('Make the login form remember the user');
    r.retitle(s.id, 'x'.repeat(200));
    expect(r.get(s.id)?.title).toBe(`${'x'.repeat(77)}...`);
    expect(r.get(other.id)?.title).toBe('Fix the parser');
  });

  it('the controller tells its host of each message once it is queued, as sent', async () => {
    const system = new LocalSystem({ store: new MemoryStore(), provider: new ScriptedProvider(() => ({ text: 'ok' })), model: DEFAULT_MODEL });
    const sent: string[] = [];
    const controller = localController({ system, rootThreadId: 'root', hooks: { sent: (text) => sent.push(text) } });
    await system.start();
    try {
      await controller.send('first task\nwith details');
      await controller.send('second');
      expect(sent).toEqual(['first task\nwith details', 'second']);
      await system.whenIdle();
    } finally {
      await system.close();
    }
  });
});
