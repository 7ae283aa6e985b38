// Reading the CLI's bundle back: which sources a bundled file holds, and which files it loads.
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** What a loaded file is made of: a bundle's sources (from its source map), or the file itself. */
export function sourcesOf(url: string): string[] {
  if (!url.startsWith('file:')) return [url];
  const file = fileURLToPath(url);
  const map = `${file}.map`;
  if (!existsSync(map)) return [file];
  const { sources } = JSON.parse(readFileSync(map, 'utf8')) as { sources: string[] };
  return [file, ...sources.map((s) => resolve(dirname(map), s))];
}

/**
 * `file` and the bundle files it loads as soon as it loads (its static imports, transitively):
 * what a dynamic import of `file` brings in before its code runs.
 */
export function staticClosure(file: string): string[] {
  const seen = new Set<string>();
  const visit = (f: string): void => {
    if (seen.has(f)) return;
    seen.add(f);
    // esbuild writes `import{a as b}from"./chunk-X.js"` and `import"./chunk-X.js"`, whitespace removed.
    for (const m of readFileSync(f, 'utf8').matchAll(/(?:\bfrom|\bimport)\s*"(\.{1,2}\/[^"]+\.js)"/g)) visit(join(dirname(f), m[1]));
  };
  visit(file);
  return [...seen];
}

/** The bundle file that `file` loads with `import("./<name>-<hash>.js")` (the first such, by name). */
export function dynamicImport(file: string, name: string): string {
  const m = new RegExp(`import\\("(\\.{1,2}/(?:[\\w-]+/)*${name}-[\\w]+\\.js)"\\)`).exec(readFileSync(file, 'utf8'));
  if (!m) throw new Error(`${file} does not import ${name}-*.js`);
  return join(dirname(file), m[1]);
}
