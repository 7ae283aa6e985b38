import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Ajv } from 'ajv';
import { OWN_TOOL_CHECKS, type InputCheck } from '@infinity-code/runtime';
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

  it("cover every tool the CLI offers and answer every call as the runtime's own compile would, errors and all", async () => {
    const schemas = await offeredSchemas();
    const ajv = new Ajv(OWN_TOOL_CHECKS);
    for (const json of schemas) {
      const check = TOOL_VALIDATORS.get(json);
      expect(check, `no check made ahead of time for ${json}`).toBeDefined();
      const compiled = ajv.compile(JSON.parse(json) as object);
      const props = Object.keys((JSON.parse(json) as { properties?: object }).properties ?? {});
      // Missing properties, unknown ones, wrong types both ways, out-of-range numbers, not an object.
      const inputs: unknown[] = [{}, { unknown: 1 }, Object.fromEntries(props.map((p) => [p, 1])), Object.fromEntries(props.map((p) => [p, 'x'])), Object.fromEntries(props.map((p) => [p, -1])), 'text', null];
      for (const input of inputs) {
        const verdict = check!(input);
        expect(verdict, `${json} on ${JSON.stringify(input)}`).toBe(compiled(input));
        const errs = (e: InputCheck['errors']) => (e ?? []).map((x) => `${x.instancePath ?? ''} ${x.message ?? ''}`);
        expect(errs(check!.errors)).toEqual(errs(compiled.errors));
      }
    }
  });
});
