import { Box, Text } from 'ink';
import { createContext, useContext, useEffect, useMemo, useState, type ReactNode } from 'react';
import type { BlockCache, Highlighter, markdownLines } from './markdown-lines.js';
import { printable, wrapSegments, type Line } from './styled-text.js';

/** What lays markdown out and colours code: loaded after the first frame (marked's rules alone take ~10 ms to set up). */
export interface MarkdownRenderer {
  render: typeof markdownLines;
  highlight?: Highlighter;
}

export interface MarkdownContextValue {
  /** Off under NO_COLOR. */
  color: boolean;
  /** Until it is loaded, text is shown as it is, wrapped. */
  renderer?: MarkdownRenderer;
}

/** How agent text is drawn. run-tui.tsx provides it (and the test rig, with the renderer at once). */
export const MarkdownContext = createContext<MarkdownContextValue>({ color: true });

export interface MarkdownProviderProps {
  color: boolean;
  /** Starts loading the renderer: called once mounted, so after the first frame. */
  load: () => Promise<MarkdownRenderer>;
  /** The renderer is in use (or failed to load): text printed from now on is rendered. */
  onSettled?: () => void;
  children: ReactNode;
}

/**
 * Provides the settings, and the renderer once loaded. Finished items are printed once
 * (<Static>), so whoever adds them at start-up (a resumed session's transcript) waits for onSettled.
 */
export function MarkdownProvider({ color, load, onSettled, children }: MarkdownProviderProps) {
  const [loaded, setLoaded] = useState<{ renderer?: MarkdownRenderer; settled: boolean }>({ settled: false });
  useEffect(() => {
    let mounted = true;
    load().then(
      (renderer) => mounted && setLoaded({ renderer, settled: true }),
      () => mounted && setLoaded({ settled: true }),
    );
    return () => {
      mounted = false;
    };
  }, [load]);
  // After the commit that put the renderer in the context.
  useEffect(() => {
    if (loaded.settled) onSettled?.();
  }, [loaded.settled, onSettled]);
  const value = useMemo(() => ({ color, ...(loaded.renderer ? { renderer: loaded.renderer } : {}) }), [color, loaded.renderer]);
  return <MarkdownContext.Provider value={value}>{children}</MarkdownContext.Provider>;
}

/** The agent's text rendered as markdown in `width` columns. */
export function Markdown({ text, width }: { text: string; width: number }) {
  const lines = useMarkdownLines(text, width);
  return <StyledLines lines={lines} />;
}

/**
 * The lines `text` renders to, laid out again only when the text, the width or the settings
 * change, and then only the blocks that changed (the last, while a reply streams).
 */
export function useMarkdownLines(text: string, width: number): Line[] {
  const { color, renderer } = useContext(MarkdownContext);
  const cache = useMemo((): BlockCache => new Map(), [width, color, renderer]);
  return useMemo(() => {
    if (!renderer) return wrapSegments([{ text: printable(text).replace(/\s+$/, '') }], width);
    return renderer.render(text, { width, color, ...(renderer.highlight ? { highlight: renderer.highlight } : {}) }, cache);
  }, [text, width, color, renderer, cache]);
}

/**
 * One <Text> per line, already wrapped to the width: truncation is only a guard, so a line
 * never wraps again and the count of rows stays the count of lines.
 */
export function StyledLines({ lines }: { lines: readonly Line[] }) {
  return (
    <Box flexDirection="column">
      {lines.map((line, i) => (
        <Text key={i} wrap="truncate-end">
          {line.length === 0
            ? ' '
            : line.map((s, j) =>
                s.style ? (
                  <Text key={j} {...s.style}>
                    {s.text}
                  </Text>
                ) : (
                  s.text
                ),
              )}
        </Text>
      ))}
    </Box>
  );
}
