import { describe, expect, it } from 'vitest';
import type { AsyncTool, JsonSchema } from './tool.js';
import { schemaHash } from './tool-checks.js';
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
      message: 'Error: invalid arguments for read: Missing required property "path" (string).',
    });
    expect(registry.resolve(call('read', { path: 1, extra: true }))).toEqual({
      kind: 'error',
      message: 'Error: invalid arguments for read: Unknown property "extra" (accepted: path). "path" must be string (got integer 1).',
    });
  });

  it('says which property is wrong and what it should be, for every kind of mistake', async () => {
    const registry = new ToolRegistry([
      tool('read_file', {
        type: 'object',
        properties: {
          path: { type: 'string' },
          start_line: { type: 'integer', minimum: 1 },
          mode: { type: 'string', enum: ['content', 'count'] },
          '-A': { type: 'integer', minimum: 0 },
          opts: {
            type: 'object',
            properties: { depth: { type: 'number' }, tags: { type: 'array', items: { type: 'string' } } },
            required: ['depth'],
            additionalProperties: false,
          },
          either: { type: ['string', 'null'] },
          name: { type: 'string', minLength: 2 },
        },
        required: ['path'],
        additionalProperties: false,
      }),
      tool('bare', { type: 'object', additionalProperties: false }),
    ]);
    await registry.ready();
    const message = (name: string, input: unknown) => {
      const r = registry.resolve({ id: 'c', name, input: input as Record<string, unknown> });
      return r.kind === 'error' ? r.message.replace(`Error: invalid arguments for ${name}: `, '') : `(accepted: ${r.kind})`;
    };
    expect(message('read_file', { path: 'a', foo: 1, query: 'x' })).toBe(
      'Unknown property "foo" (accepted: path, start_line, mode, -A, opts, either, name). ' +
        'Unknown property "query" (accepted: path, start_line, mode, -A, opts, either, name).',
    );
    expect(message('read_file', { start_line: 'one' })).toBe('Missing required property "path" (string). "start_line" must be integer (got string "one").');
    expect(message('read_file', { path: 'a', start_line: 1.5 })).toBe('"start_line" must be integer (got number 1.5).');
    expect(message('read_file', { path: 'a', start_line: 0, '-A': -1 })).toBe('"start_line" must be >= 1 (got integer 0). "-A" must be >= 0 (got integer -1).');
    expect(message('read_file', { path: 'a', mode: 'lines' })).toBe('"mode" must be one of "content", "count" (got string "lines").');
    expect(message('read_file', { path: ['a', 'b'] })).toBe('"path" must be string (got array).');
    expect(message('read_file', { path: { deep: true } })).toBe('"path" must be string (got object).');
    expect(message('read_file', { path: 'a', either: 3 })).toBe('"either" must be string or null (got integer 3).');
    expect(message('read_file', { path: 'a', name: 'x' })).toBe('"name" must NOT have fewer than 2 characters.');
    expect(message('read_file', { path: 'x'.repeat(60), start_line: 'y'.repeat(60) })).toBe('"start_line" must be integer (got string).');
    // Nested properties are named by their path.
    expect(message('read_file', { path: 'a', opts: { tags: ['x', 2], extra: 1 } })).toBe(
      'Missing required property "depth" in "opts" (number). Unknown property "extra" in "opts" (accepted: depth, tags). ' +
        '"opts.tags[1]" must be string (got integer 2).',
    );
    expect(message('read_file', ['a.txt'])).toBe('The arguments must be a JSON object (got array).');
    expect(message('bare', { x: 1 })).toBe('Unknown property "x" (it takes no properties).');
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
    expect(registry.resolve(call('read', {}))).toMatchObject({ kind: 'error', message: expect.stringMatching(/Missing required property "path"/) });
    expect(registry.resolve(call('read', { path: 'a' }))).toMatchObject({ kind: 'async' });
  });

  it('a tool whose schema has a check made ahead of time is checked without loading the validator; the others still need it', () => {
    const readSchema: JsonSchema = { type: 'object', properties: { path: { type: 'string' } }, required: ['path'], additionalProperties: false };
    // A check as Ajv's standalone code makes them: a function that sets `errors`.
    const check = Object.assign(
      (data: unknown): boolean => {
        const ok = typeof (data as { path?: unknown }).path === 'string';
        check.errors = ok
          ? null
          : [{ instancePath: '', schemaPath: '#/required', keyword: 'required', params: { missingProperty: 'path' }, message: "must have required property 'path'" }];
        return ok;
      },
      { errors: null as null | Array<{ instancePath: string; schemaPath: string; keyword: string; params: Record<string, unknown>; message: string }> },
    );
    const registry = new ToolRegistry(
      [tool('read', readSchema), tool('other', { type: 'object', properties: {} })],
      new Map([['read', { schemaHash: schemaHash(readSchema), check }]]),
    );
    expect(registry.checksReady([call('read', {})])).toBe(true);
    expect(registry.checksReady([call('read', {}), call('other', {})])).toBe(false);
    // No ready(): the check is there already.
    expect(registry.resolve(call('read', { path: 'a.txt' }))).toMatchObject({ kind: 'async', input: { path: 'a.txt' } });
    expect(registry.resolve(call('read', {}))).toEqual({ kind: 'error', message: 'Error: invalid arguments for read: Missing required property "path" (string).' });
    expect(() => registry.resolve(call('other', {}))).toThrow(/before ready\(\)/);
  });
});
