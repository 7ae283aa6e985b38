import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, expectTypeOf, it } from 'vitest';
import { defineTool } from './define-tool.js';
import { toolChecksModule, type ToolChecks } from './tool-checks.js';
import { ToolRegistry } from './tool-registry.js';
import type { ToolContext } from './tool.js';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const call = (name: string, input: Record<string, unknown>) => ({ id: `call_${name}`, name, input });

/** The checks toolChecksModule makes for these tools, as a program that imports them sees them. */
async function checksMadeAhead(tools: Parameters<typeof toolChecksModule>[0]): Promise<ToolChecks> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'ic-checks-'));
  dirs.push(dir);
  const file = path.join(dir, 'tool-checks.mjs');
  writeFileSync(file, await toolChecksModule(tools));
  return ((await import(pathToFileURL(file).href)) as { TOOL_CHECKS: ToolChecks }).TOOL_CHECKS;
}

describe('a tool defined by its schema alone', () => {
  const schedule = defineTool({
    kind: 'sync',
    name: 'schedule',
    description: 'Schedules a job.',
    input_schema: {
      type: 'object',
      properties: { job: { type: 'string' }, at: { type: 'integer', minimum: 0 }, tags: { type: 'array', items: { type: 'string' } } },
      required: ['job'],
      additionalProperties: false,
    },
    display: (input) => `Schedule ${input.job}`,
    execute(input) {
      // The handler's input is the schema's, property by property.
      expectTypeOf(input).toEqualTypeOf<{ job: string; at?: number; tags?: string[] }>();
      return { content: `scheduled ${input.job}${input.at === undefined ? '' : ` at ${input.at}`} [${(input.tags ?? []).join(',')}]` };
    },
  });

  it('gets a check made ahead of time, which the registry uses with no validator loaded', async () => {
    const registry = new ToolRegistry([schedule], await checksMadeAhead([schedule]));
    expect(registry.checksReady([{ name: 'schedule' }])).toBe(true);
    expect(registry.resolve(call('schedule', { at: -1, when: 'now' }))).toEqual({
      kind: 'error',
      message:
        'Error: invalid arguments for schedule: Missing required property "job" (string). Unknown property "when" (accepted: job, at, tags). "at" must be >= 0 (got integer -1).',
    });
    const ok = registry.resolve(call('schedule', { job: 'backup', at: 5, tags: ['nightly'] }));
    expect(ok.kind).toBe('sync');
    if (ok.kind !== 'sync') return;
    expect(await ok.tool.execute(ok.input, {} as ToolContext)).toEqual({ content: 'scheduled backup at 5 [nightly]' });
    expect(registry.displayOf(call('schedule', { job: 'backup' }))).toBe('Schedule backup');
  });

  it("answers as the registry's own compile does, and is not used once the schema has changed", async () => {
    const checks = await checksMadeAhead([schedule]);
    const compiled = new ToolRegistry([schedule]);
    await compiled.ready();
    const ahead = new ToolRegistry([schedule], checks);
    for (const input of [{}, { job: 1 }, { job: 'a', at: 1.5 }, { job: 'a', tags: [1] }, { job: 'a', at: 0 }]) {
      expect(ahead.resolve(call('schedule', input)), JSON.stringify(input)).toEqual(compiled.resolve(call('schedule', input)));
    }
    // Same name, another schema: the stale check would refuse "noon"; the registry compiles the new one.
    const changed = defineTool({
      ...schedule,
      input_schema: { type: 'object', properties: { job: { type: 'string' }, at: { type: 'string' } }, required: ['job'], additionalProperties: false },
      execute: (input) => ({ content: `${input.job} at ${input.at ?? 'once'}` }),
    });
    const registry = new ToolRegistry([changed], checks);
    expect(registry.checksReady([{ name: 'schedule' }])).toBe(false);
    await registry.ready();
    expect(registry.resolve(call('schedule', { job: 'backup', at: 'noon' }))).toMatchObject({ kind: 'sync', input: { at: 'noon' } });
  });
});
