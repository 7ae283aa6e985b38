import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { TOOL_VALIDATORS } from './generated/tool-validators.js';
import { offeredSchemas, validatorModule } from './test-support/tool-validator-code.js';

const file = fileURLToPath(new URL('./generated/tool-validators.ts', import.meta.url));

describe('the tool input checks made ahead of time', () => {
  it('are those of the schemas the CLI offers now (UPDATE_TOOL_VALIDATORS=1 rewrites them)', async () => {
    const source = validatorModule(await offeredSchemas());
    if (process.env.UPDATE_TOOL_VALIDATORS) writeFileSync(file, source);
    expect(readFileSync(file, 'utf8'), 'src/generated/tool-validators.ts is stale: run `pnpm --filter infinity-code gen:validators`').toBe(source);
  });

  it('cover every tool the CLI offers and reject what Ajv rejects, with its messages', async () => {
    const schemas = await offeredSchemas();
    expect(schemas.every((s) => TOOL_VALIDATORS.has(s))).toBe(true);
    const readFile = schemas.find((s) => s.includes('"start_line"'));
    expect(readFile).toBeDefined();
    const check = TOOL_VALIDATORS.get(readFile!)!;
    expect(check({ path: 'a.ts' })).toBe(true);
    expect(check({ start_line: 0, extra: 1 })).toBe(false);
    expect((check.errors ?? []).map((e: { message?: string }) => e.message)).toEqual(
      expect.arrayContaining(["must have required property 'path'", 'must NOT have additional properties', 'must be >= 1']),
    );
  });
});
