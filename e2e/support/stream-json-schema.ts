// Every stream-json line an e2e run prints is checked against the published schema
// (docs/stream-json.schema.json), so the documented format and the program cannot drift apart.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Ajv } from 'ajv';

const schema = JSON.parse(readFileSync(fileURLToPath(new URL('../../docs/stream-json.schema.json', import.meta.url)), 'utf8')) as object;
const validate = new Ajv({ allErrors: true, strict: false }).compile(schema);

/**
 * The complete lines of `stdout` that are not valid stream-json, with why. A last line without
 * its newline (the process was killed while writing it) is not complete and not checked.
 */
export function invalidStreamJsonLines(stdout: string): string[] {
  const lines = stdout.split('\n');
  lines.pop();
  const bad: string[] = [];
  for (const line of lines) {
    if (line.trim() === '') continue;
    let obj: unknown;
    try {
      obj = JSON.parse(line);
    } catch {
      bad.push(`not JSON: ${line.slice(0, 200)}`);
      continue;
    }
    if (!validate(obj)) bad.push(`${line.slice(0, 300)}\n  ${JSON.stringify(validate.errors?.slice(0, 5))}`);
  }
  return bad;
}
