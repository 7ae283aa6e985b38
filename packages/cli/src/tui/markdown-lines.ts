// Markdown to styled terminal lines: the agent's text as the TUI shows it. A pure function of the
// text, the width and the settings: a finished item is laid out once, a streaming one on each
// change, its unchanged blocks from a cache (marked's lexer reads an unclosed code fence as a
// code block to the end, so a partial reply shows its code so far as code).
import { Lexer, type Token, type Tokens } from 'marked';
import { breakLine, expandTabs, lineWidth, pad, prefixLines, printable, wrapSegments, type Line, type Segment, type Style } from './styled-text.js';

/** Code's lines, coloured, or undefined for a language it doesn't know. */
export type Highlighter = (code: string, lang: string) => Line[] | undefined;

export interface MarkdownSettings {
  /** Colours on; off (NO_COLOR) keeps bold, italics and underlines, and inline code keeps its backticks. */
  color: boolean;
  highlight?: Highlighter;
}

export interface MarkdownOptions extends MarkdownSettings {
  /** Columns available. */
  width: number;
}

const BULLETS = ['•', '◦', '▪'];
const CODE_INDENT = 2;
const QUOTE_BAR: Segment = { text: '│ ', style: { color: 'gray' } };
const RULE: Style = { color: 'gray' };

interface Context {
  color: boolean;
  highlight: Highlighter | undefined;
  listDepth: number;
}

/**
 * Top-level blocks already laid out, by their source: while a reply streams only its last block
 * changes, so the others (a long code block's colours above all) are not laid out again. Bound to
 * one width and one set of settings; markdownLines keeps in it only the blocks of the latest text.
 */
export type BlockCache = Map<string, Line[]>;

export function markdownLines(text: string, o: MarkdownOptions, cache?: BlockCache): Line[] {
  const tokens = new Lexer({ gfm: true }).lex(printable(text));
  const ctx: Context = { color: o.color, highlight: o.color ? o.highlight : undefined, listDepth: 0 };
  const width = Math.max(8, o.width);
  const laidOut = new Map<string, Line[]>();
  const out: Line[] = [];
  for (const token of tokens) {
    let lines = laidOut.get(token.raw) ?? cache?.get(token.raw);
    if (!lines) {
      lines = block(token, width, ctx);
      if (!o.color) lines = lines.map((l) => l.map(uncoloured));
    }
    laidOut.set(token.raw, lines);
    if (lines.length === 0) continue;
    if (out.length > 0) out.push([]);
    out.push(...lines);
  }
  if (cache) {
    cache.clear();
    for (const [raw, lines] of laidOut) cache.set(raw, lines);
  }
  return out;
}

/** Block tokens one after another: a blank line between them, none in a tight list's item. */
function blocks(tokens: readonly Token[], width: number, ctx: Context, tight: boolean): Line[] {
  const out: Line[] = [];
  for (const token of tokens) {
    const lines = block(token, width, ctx);
    if (lines.length === 0) continue;
    if (out.length > 0 && !tight) out.push([]);
    out.push(...lines);
  }
  return out;
}

function block(token: Token, width: number, ctx: Context): Line[] {
  switch (token.type) {
    case 'space':
    case 'def':
      return [];
    case 'paragraph':
      return wrapSegments(inline((token as Tokens.Paragraph).tokens, {}, ctx), width);
    case 'text': {
      // A tight list item's text: inline tokens, or the raw text where it has none.
      const t = token as Tokens.Text;
      return wrapSegments(t.tokens ? inline(t.tokens, {}, ctx) : [{ text: decode(t.text) }], width);
    }
    case 'heading': {
      const h = token as Tokens.Heading;
      return wrapSegments(inline(h.tokens, headingStyle(h.depth), ctx), width);
    }
    case 'code':
      return codeBlock(token as Tokens.Code, width, ctx);
    case 'blockquote': {
      const lines = blocks((token as Tokens.Blockquote).tokens, width - 2, ctx, false);
      return prefixLines(lines, [QUOTE_BAR]);
    }
    case 'list':
      return list(token as Tokens.List, width, ctx);
    case 'table':
      return table(token as Tokens.Table, width, ctx);
    case 'hr':
      return [[{ text: '─'.repeat(width), style: RULE }]];
    case 'html':
      // Shown as the model wrote it: a terminal has no HTML to render.
      return wrapSegments([{ text: (token as Tokens.HTML).text.replace(/\n+$/, '') }], width);
    default: {
      const generic = token as Tokens.Generic;
      if (Array.isArray(generic.tokens)) return blocks(generic.tokens, width, ctx, false);
      return wrapSegments([{ text: generic.raw.replace(/\n+$/, '') }], width);
    }
  }
}

function headingStyle(depth: number): Style {
  if (depth === 1) return { bold: true, underline: true };
  if (depth <= 3) return { bold: true };
  return { bold: true, italic: true };
}

/** Indented, coloured by language when a highlighter is loaded, long lines cut to the width rather than running off. */
function codeBlock(token: Tokens.Code, width: number, ctx: Context): Line[] {
  const text = expandTabs(token.text.replace(/\n$/, ''));
  const lang = token.lang?.trim().split(/\s+/)[0] ?? '';
  const lines = (lang !== '' ? ctx.highlight?.(text, lang) : undefined) ?? text.split('\n').map((l): Line => (l === '' ? [] : [{ text: l }]));
  const room = width - CODE_INDENT;
  return prefixLines(
    lines.flatMap((l) => breakLine(l, room)),
    [{ text: ' '.repeat(CODE_INDENT) }],
  );
}

function list(token: Tokens.List, width: number, ctx: Context): Line[] {
  const start = typeof token.start === 'number' ? token.start : 1;
  const markers = token.items.map((item, i) => {
    if (item.task) return item.checked ? '☑' : '☐';
    return token.ordered ? `${start + i}.` : (BULLETS[ctx.listDepth % BULLETS.length] ?? '•');
  });
  const markerWidth = Math.max(...markers.map((m) => lineWidth([{ text: m }])));
  const inner: Context = { ...ctx, listDepth: ctx.listDepth + 1 };
  const out: Line[] = [];
  token.items.forEach((item, i) => {
    const content = item.tokens.filter((t) => t.type !== 'checkbox');
    const lines = blocks(content, width - markerWidth - 1, inner, !token.loose);
    if (token.loose && i > 0) out.push([]);
    const marker = markers[i] ?? '';
    const first: Segment[] = [{ text: `${' '.repeat(markerWidth - lineWidth([{ text: marker }]))}${marker} `, style: { color: 'gray' } }];
    out.push(...prefixLines(lines.length > 0 ? lines : [[]], first, [{ text: ' '.repeat(markerWidth + 1) }]));
  });
  return out;
}

/**
 * A grid when it fits the width; otherwise each row as "header: cell" lines, which wrap.
 * Cells are single lines in GFM tables.
 */
function table(token: Tokens.Table, width: number, ctx: Context): Line[] {
  const header = token.header.map((c) => oneLine(inline(c.tokens, { bold: true }, ctx)));
  const rows = token.rows.map((r) => r.map((c) => oneLine(inline(c.tokens, {}, ctx))));
  const widths = header.map((h, i) => Math.max(lineWidth(h), ...rows.map((r) => lineWidth(r[i] ?? []))));
  const sep = { text: ' │ ', style: RULE };
  const total = widths.reduce((a, b) => a + b, 0) + 3 * (widths.length - 1);
  if (total <= width) {
    const row = (cells: Line[]): Line =>
      cells.flatMap((c, i) => [...(i > 0 ? [sep] : []), ...pad(c, widths[i] ?? 0, token.align[i] ?? 'left')]);
    const rule: Line = [{ text: widths.map((w) => '─'.repeat(w)).join('─┼─'), style: RULE }];
    return [row(header), rule, ...rows.map((r) => row(header.map((_, i) => r[i] ?? [])))];
  }
  const out: Line[] = [];
  rows.forEach((r, i) => {
    if (i > 0) out.push([]);
    header.forEach((h, j) => out.push(...wrapSegments([...h, { text: ': ', style: { bold: true } }, ...(r[j] ?? [])], width)));
  });
  return out;
}

function oneLine(segments: Segment[]): Line {
  return segments.map((s) => ({ ...s, text: s.text.replace(/\n/g, ' ') }));
}

/** Inline tokens to segments, each in `style` plus its own. */
function inline(tokens: readonly Token[], style: Style, ctx: Context): Segment[] {
  return tokens.flatMap((t) => inlineToken(t, style, ctx));
}

function inlineToken(token: Token, style: Style, ctx: Context): Segment[] {
  const seg = (text: string, own: Style = {}): Segment[] => {
    if (text === '') return [];
    const merged = { ...style, ...own };
    return [Object.keys(merged).length > 0 ? { text, style: merged } : { text }];
  };
  switch (token.type) {
    case 'text': {
      const t = token as Tokens.Text;
      return t.tokens ? inline(t.tokens, style, ctx) : seg(decode(t.text));
    }
    case 'escape':
      return seg((token as Tokens.Escape).text);
    case 'strong':
      return inline((token as Tokens.Strong).tokens, { ...style, bold: true }, ctx);
    case 'em':
      return inline((token as Tokens.Em).tokens, { ...style, italic: true }, ctx);
    case 'del':
      return inline((token as Tokens.Del).tokens, { ...style, strikethrough: true }, ctx);
    case 'codespan': {
      const code = (token as Tokens.Codespan).text.replace(/\n/g, ' ');
      // Without colour the backticks are what tells code from prose.
      return ctx.color ? seg(code, { color: 'cyan' }) : seg(`\`${code}\``);
    }
    case 'br':
      return seg('\n');
    case 'link': {
      const l = token as Tokens.Link;
      const label = inline(l.tokens, { ...style, color: 'blue', underline: true }, ctx);
      const shown = label.map((s) => s.text).join('');
      const href = l.href.replace(/^mailto:/, '');
      // The address too when the label hides it: the terminal has no hover.
      return shown === href || shown === l.href ? label : [...label, ...seg(` (${l.href})`, { color: 'gray' })];
    }
    case 'image': {
      const i = token as Tokens.Image;
      return seg(`[image${i.text ? `: ${i.text}` : ''}] (${i.href})`, { color: 'gray' });
    }
    case 'html':
      return seg((token as Tokens.Tag).text);
    case 'checkbox':
      return [];
    default: {
      const generic = token as Tokens.Generic;
      return Array.isArray(generic.tokens) ? inline(generic.tokens, style, ctx) : seg(generic.raw);
    }
  }
}

/** marked escapes what an HTML renderer would need escaped; the terminal shows the characters. */
function decode(text: string): string {
  return text.replace(/&(amp|lt|gt|quot|#39|#x27);/g, (_, e: string) => ENTITIES[e] ?? _);
}

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', '#39': "'", '#x27': "'" };

function uncoloured(s: Segment): Segment {
  if (!s.style?.color) return s;
  const { color: _, ...rest } = s.style;
  return Object.keys(rest).length > 0 ? { text: s.text, style: rest } : { text: s.text };
}
