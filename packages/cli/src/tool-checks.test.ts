import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Ajv } from 'ajv';
import { OWN_TOOL_CHECKS, schemaHash, toolChecksModule, type InputCheck, type ToolChecks } from '@infinity-code/runtime';
import { afterAll, describe, expect, it } from 'vitest';
import { offeredTools } from './offered-tools.js';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const importChecks = async (file: string): Promise<ToolChecks> => ((await import(pathToFileURL(file).href)) as { TOOL_CHECKS: ToolChecks }).TOOL_CHECKS;

describe('the input checks made when the CLI is built', () => {
  it("answer every call to every tool the CLI offers as the runtime's own compile would, errors and all", async () => {
    const tools = await offeredTools();
    const dir = mkdtempSync(path.join(os.tmpdir(), 'ic-checks-'));
    dirs.push(dir);
    writeFileSync(path.join(dir, 'tool-checks.mjs'), await toolChecksModule(tools));
    const checks = await importChecks(path.join(dir, 'tool-checks.mjs'));
    const ajv = new Ajv(OWN_TOOL_CHECKS);
    for (const tool of tools) {
      const made = checks.get(tool.name);
      expect(made?.schemaHash, `no check made for ${tool.name}`).toBe(schemaHash(tool.input_schema));
      const compiled = ajv.compile(tool.input_schema);
      const props = Object.keys(tool.input_schema.properties ?? {});
      // Missing properties, unknown ones, wrong types both ways, out-of-range numbers, not an object.
      const inputs: unknown[] = [{}, { unknown: 1 }, Object.fromEntries(props.map((p) => [p, 1])), Object.fromEntries(props.map((p) => [p, 'x'])), Object.fromEntries(props.map((p) => [p, -1])), 'text', null];
      for (const input of inputs) {
        expect(made!.check(input), `${tool.name} on ${JSON.stringify(input)}`).toBe(compiled(input));
        const errs = (e: InputCheck['errors']) => (e ?? []).map((x) => `${x.instancePath ?? ''} ${x.message ?? ''}`);
        expect(errs(made!.check.errors)).toEqual(errs(compiled.errors));
      }
    }
  });

  it('are in the build, one for each tool the CLI offers, made from its schema as it is now', async () => {
    const built = fileURLToPath(new URL('../dist/generated/tool-checks.js', import.meta.url));
    expect(existsSync(built), `${built} is missing: run pnpm build`).toBe(true);
    const checks = await importChecks(built);
    const tools = await offeredTools();
    expect([...checks.keys()]).toEqual(tools.map((t) => t.name));
    for (const tool of tools) expect(checks.get(tool.name)?.schemaHash, `${tool.name}'s check is stale: run pnpm build`).toBe(schemaHash(tool.input_schema));
  });
});
