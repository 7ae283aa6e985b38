import { Box, Text } from 'ink';
import { createContext, useContext, useEffect, useMemo, useState, type ReactNode } from 'react';
import { markdownLines, type BlockCache, type Highlighter, type MarkdownSettings } from './markdown-lines.js';
import type { Line } from './styled-text.js';

/** How agent text is drawn: colours (off under NO_COLOR) and, once loaded, the code highlighter. run-tui.tsx provides it. */
export const MarkdownSettingsContext = createContext<MarkdownSettings>({ color: true });

export interface MarkdownSettingsProviderProps {
  color: boolean;
  /** Starts loading the code highlighter: called once mounted, so after the first frame. */
  loadHighlighter: () => Promise<Highlighter>;
  /** The highlighter is in use (or failed to load): text printed from now on is coloured. */
  onHighlighterSettled?: () => void;
  children: ReactNode;
}

/**
 * Provides the settings, the highlighter once loaded. Finished items are printed once (<Static>),
 * so whoever adds many at start-up (a resumed session's transcript) waits for onHighlighterSettled.
 */
export function MarkdownSettingsProvider({ color, loadHighlighter, onHighlighterSettled, children }: MarkdownSettingsProviderProps) {
  const [highlight, setHighlight] = useState<{ h?: Highlighter; settled: boolean }>({ settled: false });
  useEffect(() => {
    let mounted = true;
    loadHighlighter().then(
      (h) => mounted && setHighlight({ h, settled: true }),
      () => mounted && setHighlight({ settled: true }),
    );
    return () => {
      mounted = false;
    };
  }, [loadHighlighter]);
  // After the commit that put the highlighter in the context.
  useEffect(() => {
    if (highlight.settled) onHighlighterSettled?.();
  }, [highlight.settled, onHighlighterSettled]);
  const settings = useMemo(() => ({ color, ...(highlight.h ? { highlight: highlight.h } : {}) }), [color, highlight.h]);
  return <MarkdownSettingsContext.Provider value={settings}>{children}</MarkdownSettingsContext.Provider>;
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
  const settings = useContext(MarkdownSettingsContext);
  const cache = useMemo((): BlockCache => new Map(), [width, settings]);
  return useMemo(() => markdownLines(text, { ...settings, width }, cache), [text, width, settings, cache]);
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
