import type { HistoryMessage } from '@infinity-code/runtime';
import { render } from 'ink';
import type { PromptWorkspace } from '../prompt-workspace.js';
import { App } from './app.js';
import { callDisplays, resultDisplays } from './history-items.js';
import type { TuiController, TuiInfo } from './controller.js';
import { MarkdownProvider, type MarkdownRenderer } from './markdown.js';
import { createUiStore } from './store.js';

export interface RunTuiOptions {
  stdin?: NodeJS.ReadStream;
  stdout?: NodeJS.WriteStream;
  stderr?: NodeJS.WriteStream;
  /** Spinners move (default true). */
  animate?: boolean;
  /** Route console.* above the UI instead of through it (default true; test runners own console). */
  patchConsole?: boolean;
  /** The repository as the prompt sees it (project commands, `@` mentions). */
  workspace?: PromptWorkspace;
  /**
   * The session opening in the background: the first frame is drawn at once, a continued
   * session's transcript shown once it is open, and a failure to open reported in the transcript.
   */
  ready?: Promise<{
    history?: readonly HistoryMessage[];
    /** A call's display line as its tool gives it, for the earlier transcript (lines aren't stored). */
    callDisplay?: (call: { name: string; input: Record<string, unknown> }) => string | undefined;
    /** What a finished call's tool gives UIs, read back from its stored result (see resultDisplays). */
    resultDisplay?: Parameters<typeof resultDisplays>[1];
    /** Said once the session is open (a definition left out of .mcp.json, say). */
    notices?: readonly string[];
    /** Later notices (an MCP server that failed); returns the unsubscribe function. */
    onNotice?: (notify: (text: string, level: 'info' | 'error') => void) => () => void;
  }>;
  /** The sandbox, as the status line says it (see TuiInfo.backend), once known (it may be after `ready`). */
  backend?: Promise<string>;
  /** Sent at once as if the user typed it: it shows in the transcript and goes once the session is open. */
  firstMessage?: string;
}

/**
 * Runs the interactive UI until the user quits (/quit, Ctrl+C twice, Ctrl+D). Needs a TTY on
 * stdin: off a TTY the keyboard is inactive, so callers should go headless instead. Resolves with
 * what to tell the user once the UI has gone (what became of the session's changes), if anything.
 */
export async function runTui(controller: TuiController, info: TuiInfo, opts: RunTuiOptions = {}): Promise<string | undefined> {
  const store = createUiStore(controller, info);
  let markdownSettled!: () => void;
  const markdown = new Promise<void>((resolve) => (markdownSettled = resolve));
  const failed = (what: string) => (err: unknown) =>
    store.dispatch({
      type: 'ui:notice',
      level: 'error',
      text: `${what}: ${err instanceof Error ? err.message : String(err)} Quit with Ctrl+C twice.`,
    });
  precompileEmojiRegex();
  const ui = (firstLine: string | undefined) => (
    <MarkdownProvider color={colorWanted(process.env)} load={loadMarkdown} onSettled={markdownSettled}>
      <App
        store={store}
        controller={controller}
        animate={opts.animate ?? true}
        {...(opts.workspace ? { workspace: opts.workspace } : {})}
        {...(firstLine !== undefined ? { firstLine } : {})}
      />
    </MarkdownProvider>
  );
  // With a session still opening, the first message waits for its transcript (see below).
  const instance = render(ui(opts.ready ? undefined : opts.firstMessage), {
    ...(opts.stdin ? { stdin: opts.stdin } : {}),
    ...(opts.stdout ? { stdout: opts.stdout } : {}),
    ...(opts.stderr ? { stderr: opts.stderr } : {}),
    // Ctrl+C stops the agent first; the App quits on the second press.
    exitOnCtrlC: false,
    patchConsole: opts.patchConsole ?? true,
    // Where the terminal supports it, Shift+Enter is told apart from Enter.
    kittyKeyboard: { mode: 'auto', flags: ['disambiguateEscapeCodes'] },
  });
  // A resumed session's transcript is printed once: rendered.
  opts.ready
    ?.then(async (ready) => {
      if (ready.history && ready.history.length > 0) await markdown;
      return ready;
    })
    .then(
    ({ history, callDisplay, resultDisplay, notices, onNotice }) => {
      if (history && history.length > 0) {
        store.dispatch({
          type: 'ui:history',
          messages: history,
          ...(callDisplay ? { displays: callDisplays(history, callDisplay) } : {}),
          ...(resultDisplay ? { results: resultDisplays(history, resultDisplay) } : {}),
        });
      }
      for (const text of notices ?? []) store.dispatch({ type: 'ui:notice', level: 'error', text });
      onNotice?.((text, level) => store.dispatch({ type: 'ui:notice', level, text }));
      // After a resumed session's transcript, which it continues.
      if (opts.firstMessage !== undefined) instance.rerender(ui(opts.firstMessage));
    },
    failed('The session could not start'),
  );
  opts.backend?.then(
    (backend) => store.dispatch({ type: 'ui:backend', backend }),
    // Said once: a session that could not open has said so already.
    (err: unknown) => (opts.ready ?? Promise.resolve()).then(() => failed('The sandbox could not start')(err), () => undefined),
  );
  // Command files that define nothing are said once the first frame is out (and again in /help).
  for (const p of opts.workspace?.commands().problems ?? []) store.dispatch({ type: 'ui:notice', level: 'error', text: p.message });
  try {
    const farewell = await instance.waitUntilExit();
    return typeof farewell === 'string' ? farewell : undefined;
  } finally {
    store.disconnect();
  }
}

/** The markdown renderer's colours follow https://no-color.org: any non-empty NO_COLOR turns them off. */
function colorWanted(env: NodeJS.ProcessEnv): boolean {
  return (env.NO_COLOR ?? '') === '';
}

/**
 * Not needed for the first frame, and costly before it: marked sets up its rules (~10 ms) and the
 * highlighter parses its grammars (some 350 KB). Both are chunks of their own in the bundle.
 */
async function loadMarkdown(): Promise<MarkdownRenderer> {
  const [{ markdownLines }, { highlightCode }] = await Promise.all([import('./markdown-lines.js'), import('./code-highlight.js')]);
  return { render: markdownLines, highlight: highlightCode };
}

/**
 * Ink measures text with string-width, which tests each non-ASCII grapheme (the prompt's ›, the
 * status line's ·) against /^\p{RGI_Emoji}$/v. V8 compiles a regexp to bytecode on its first use
 * and to machine code on its second: for that set of thousands of emoji sequences, about 100 ms
 * of the first frame on a 2-core machine. A first use on a subject of 1,000 characters or more
 * goes straight to machine code, and regexps of the same source and flags share their compiled
 * code: matched once here, on long one-byte and two-byte strings, it costs about 20 ms. Only a
 * speed-up (keep the source in step with string-width's); string-width's results are the same.
 */
function precompileEmojiRegex(): void {
  try {
    const rgiEmoji = new RegExp('^\\p{RGI_Emoji}$', 'v');
    rgiEmoji.test('·'.repeat(1000));
    rgiEmoji.test('›'.repeat(1000));
  } catch {
    // A runtime without the v flag: nothing to prepare.
  }
}
