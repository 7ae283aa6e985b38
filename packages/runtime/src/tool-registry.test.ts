import { describe, expect, it } from 'vitest';
import type { AsyncTool, JsonSchema } from './tool.js';
import { ToolRegistry } from './tool-registry.js';

const tool = (name: string, input_schema: JsonSchema): AsyncTool => ({
  kind: 'async',
  name,
  description: `the ${name} tool`,
  input_schema,
  dispatch: () => undefined,
});

const call = (name: string, input: Record<string, unknown>) => ({ id: `call_${name}`, name, input });

// Each schema of the tools a system is made with compiles at its tool's first call: none of that
// is on the way to a session's first request.
describe('checking tool calls', () => {
  it('checks arguments against the schema, naming what is wrong', async () => {
    const registry = new ToolRegistry([tool('read', { type: 'object', properties: { path: { type: 'string' } }, required: ['path'], additionalProperties: false })]);
    // The validator is loaded on first need, not when the registry is made.
    expect(() => registry.resolve(call('read', { path: 'a.txt' }))).toThrow(/before ready\(\)/);
    await registry.ready();
    expect(registry.definitions().map((d) => d.name)).toEqual(['read']);
    expect(registry.resolve(call('read', { path: 'a.txt' }))).toMatchObject({ kind: 'async', input: { path: 'a.txt' } });
    expect(registry.resolve(call('read', {}))).toEqual({
      kind: 'error',
      message: "Error: invalid arguments for read: input must have required property 'path'.",
    });
    expect(registry.resolve(call('read', { path: 1, extra: true }))).toMatchObject({
      kind: 'error',
      message: expect.stringMatching(/^Error: invalid arguments for read: .*must NOT have additional properties.*\/path must be string/),
    });
  });

  it("a tool whose schema cannot be compiled answers its calls with an error; the other tools work", async () => {
    const registry = new ToolRegistry([
      tool('broken', { type: 'object', properties: { n: { type: 'number', minimum: 'one' } } }),
      tool('fine', { type: 'object', properties: {} }),
    ]);
    await registry.ready();
    expect(registry.resolve(call('broken', { n: 1 }))).toMatchObject({
      kind: 'error',
      message: expect.stringMatching(/^Error: the tool broken cannot be used: its input schema is invalid/),
    });
    expect(registry.resolve(call('fine', {}))).toMatchObject({ kind: 'async' });
  });

  it('warm() compiles the schemas ahead of the calls; a broken one is still reported at its call', async () => {
    const registry = new ToolRegistry([
      tool('broken', { type: 'object', properties: { n: { type: 'number', minimum: 'one' } } }),
      tool('read', { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] }),
    ]);
    await registry.warm();
    expect(registry.resolve(call('broken', { n: 1 }))).toMatchObject({ kind: 'error', message: expect.stringMatching(/its input schema is invalid/) });
    expect(registry.resolve(call('read', {}))).toMatchObject({ kind: 'error', message: expect.stringMatching(/required property 'path'/) });
    expect(registry.resolve(call('read', { path: 'a' }))).toMatchObject({ kind: 'async' });
  });

  it('a tool whose schema has a check made ahead of time is checked without loading the validator; the others still need it', () => {
    const readSchema: JsonSchema = { type: 'object', properties: { path: { type: 'string' } }, required: ['path'], additionalProperties: false };
    // A check as Ajv's standalone code makes them: a function that sets `errors`.
    const check = Object.assign(
      (data: unknown): boolean => {
        const ok = typeof (data as { path?: unknown }).path === 'string';
        check.errors = ok ? null : [{ instancePath: '', message: "must have required property 'path'" }];
        return ok;
      },
      { errors: null as null | Array<{ instancePath: string; message: string }> },
    );
    const registry = new ToolRegistry(
      [tool('read', readSchema), tool('other', { type: 'object', properties: {} })],
      new Map([[JSON.stringify(readSchema), check]]),
    );
    expect(registry.checksReady([call('read', {})])).toBe(true);
    expect(registry.checksReady([call('read', {}), call('other', {})])).toBe(false);
    // No ready(): the check is there already.
    expect(registry.resolve(call('read', { path: 'a.txt' }))).toMatchObject({ kind: 'async', input: { path: 'a.txt' } });
    expect(registry.resolve(call('read', {}))).toEqual({ kind: 'error', message: "Error: invalid arguments for read: input must have required property 'path'." });
    expect(() => registry.resolve(call('other', {}))).toThrow(/before ready\(\)/);
  });
});
