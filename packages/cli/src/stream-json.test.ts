import { describe, expect, it } from 'vitest';
import { StreamJsonWriter } from './stream-json.js';

const init = { model: 'm', cwd: '/repo', tools: ['read_file'], permissionMode: 'acceptEdits' as const, sandbox: 'overlay-root', contained: true };

describe('StreamJsonWriter', () => {
  it('holds what happens before the init line (the task goes out before the sandbox is known) and writes it after init', () => {
    const out: Array<{ type?: string; subtype?: string }> = [];
    const w = new StreamJsonWriter((o) => out.push(o), 's1');
    w.event({ type: 'tool-result', threadId: 's1', toolUseId: 'toolu_1', content: [{ type: 'text', text: 'ok' }], isError: false });
    w.mcpServer({ name: 'files', state: 'ready', tools: [] });
    expect(out).toEqual([]);
    w.init(init);
    expect(out.map((o) => `${o.type}/${o.subtype ?? ''}`)).toEqual(['system/init', 'user/', 'mcp_server/']);
    w.event({ type: 'tool-result', threadId: 's1', toolUseId: 'toolu_2', content: [{ type: 'text', text: 'ok' }], isError: false });
    expect(out).toHaveLength(4);
  });
});
