// Syntax colours for code blocks: highlight.js's grammars (lowlight's common set, some 37
// languages) read as a tree, each token's class mapped to a terminal colour. Loaded after the
// first frame (run-tui.tsx): parsing the grammars would delay it.
import { common, createLowlight } from 'lowlight';
import type { Line, Segment } from './styled-text.js';

type Root = ReturnType<ReturnType<typeof createLowlight>['highlight']>;
type Node = Root['children'][number];

/** highlight.js classes (without "hljs-") to the colours of a 16-colour terminal. */
const COLORS: Record<string, string> = {
  keyword: 'magenta',
  'selector-tag': 'magenta',
  literal: 'magenta',
  doctag: 'magenta',
  built_in: 'cyan',
  type: 'cyan',
  class: 'cyan',
  'selector-class': 'cyan',
  'selector-id': 'cyan',
  string: 'green',
  regexp: 'green',
  symbol: 'green',
  char: 'green',
  addition: 'green',
  'template-tag': 'green',
  number: 'yellow',
  attr: 'yellow',
  attribute: 'yellow',
  variable: 'yellow',
  'template-variable': 'yellow',
  property: 'yellow',
  title: 'blue',
  section: 'blue',
  name: 'blue',
  tag: 'blue',
  comment: 'gray',
  quote: 'gray',
  meta: 'gray',
  deletion: 'red',
  bullet: 'yellow',
};

/** One instance per loaded module: a registry of grammars, never changed after this line. */
const lowlight = createLowlight(common);

/** `code` coloured as `lang` (a name or alias highlight.js knows), or undefined for a language it doesn't. */
export function highlightCode(code: string, lang: string): Line[] | undefined {
  const name = lang.toLowerCase();
  if (!lowlight.registered(name)) return undefined;
  const lines: Line[] = [[]];
  const walk = (node: Node, color: string | undefined) => {
    if (node.type === 'text') {
      node.value.split('\n').forEach((part, i) => {
        if (i > 0) lines.push([]);
        if (part !== '') lines[lines.length - 1].push(color ? { text: part, style: { color } } : ({ text: part } satisfies Segment));
      });
      return;
    }
    if (node.type !== 'element') return;
    const own = classColor(node.properties.className);
    for (const child of node.children) walk(child, own ?? color);
  };
  for (const node of lowlight.highlight(name, code).children) walk(node, undefined);
  return lines;
}

function classColor(className: unknown): string | undefined {
  if (!Array.isArray(className)) return undefined;
  for (const c of className) {
    if (typeof c !== 'string' || !c.startsWith('hljs-')) continue;
    const color = COLORS[c.slice(5)];
    if (color) return color;
  }
  return undefined;
}
