import { Box, render, Text, useApp, useInput, type Key } from 'ink';
import { useEffect, useRef, useState } from 'react';
import { pickerKey, pickerRows, pickerState, type PickerKey, type PickerSession, type PickerState } from './session-picker-state.js';
import { useColumns } from './use-columns.js';

export interface SessionPickerProps {
  sessions: readonly PickerSession[];
  /** Epoch ms, for the ages. */
  now: number;
  /** Rows of sessions shown at once. */
  height: number;
  isActive: boolean;
  onDone: (done: NonNullable<PickerState['done']>) => void;
}

/** The project's sessions, newest first: ↑/↓ choose, Enter opens, Esc leaves. */
export function SessionPicker({ sessions, now, height, isActive, onDone }: SessionPickerProps) {
  const [state, setState] = useState(() => pickerState(sessions));
  const columns = useColumns();
  useInput(
    (input, key) => {
      const k = pickerKeyOf(input, key);
      if (!k) return;
      setState((s) => pickerKey(s, k));
    },
    { isActive: isActive && !state.done },
  );
  const done = state.done;
  // Told once the answer is on screen (the list gone), so leaving draws no list over what follows.
  const told = useRef(false);
  useEffect(() => {
    if (!done || told.current) return;
    told.current = true;
    onDone(done);
  }, [done, onDone]);
  if (done) {
    const chosen = done.kind === 'open' ? sessions.find((x) => x.id === done.id) : undefined;
    return chosen ? <Text dimColor>Resuming {chosen.title}…</Text> : null;
  }
  const { rows, above, below } = pickerRows(state, now, height, columns);
  return (
    <Box flexDirection="column">
      <Text bold>Resume a session ({sessions.length}): ↑/↓ choose · Enter opens · Esc leaves</Text>
      {above > 0 ? <Text dimColor>  … {above} newer</Text> : null}
      {rows.map((r) => (
        <Text key={r.id} wrap="truncate-end" {...(r.selected ? { color: 'cyan' } : r.inUse ? { dimColor: true } : {})}>
          {r.selected ? '› ' : '  '}
          {r.text}
        </Text>
      ))}
      {below > 0 ? <Text dimColor>  … {below} older</Text> : null}
      {state.message ? <Text color="yellow">{state.message}</Text> : null}
    </Box>
  );
}

/** Arrows (and j/k), Page Up/Down, Home/End, Enter; Esc or Ctrl+C leaves. */
function pickerKeyOf(input: string, key: Key): PickerKey | undefined {
  if (key.upArrow || input === 'k') return 'up';
  if (key.downArrow || input === 'j') return 'down';
  if (key.pageUp) return 'page-up';
  if (key.pageDown) return 'page-down';
  if (key.home) return 'home';
  if (key.end) return 'end';
  if (key.return) return 'enter';
  if (key.escape || (key.ctrl && input === 'c')) return 'escape';
  return undefined;
}

/**
 * Shows the picker until the user chooses: the id of the session to open, or undefined (Esc,
 * Ctrl+C). Needs a TTY on stdin, as the TUI does.
 */
export async function pickSession(sessions: readonly PickerSession[], opts: { stdin?: NodeJS.ReadStream; stdout?: NodeJS.WriteStream } = {}): Promise<string | undefined> {
  let picked: string | undefined;
  const rows = (opts.stdout ?? process.stdout).rows;
  const instance = render(<Picker sessions={sessions} height={Math.max(3, (rows > 0 ? rows : 24) - 6)} onPicked={(id) => (picked = id)} />, {
    ...(opts.stdin ? { stdin: opts.stdin } : {}),
    ...(opts.stdout ? { stdout: opts.stdout } : {}),
    exitOnCtrlC: false,
    patchConsole: false,
  });
  await instance.waitUntilExit();
  return picked;
}

function Picker({ sessions, height, onPicked }: { sessions: readonly PickerSession[]; height: number; onPicked: (id: string | undefined) => void }) {
  const { exit } = useApp();
  const [now] = useState(Date.now);
  return (
    <SessionPicker
      sessions={sessions}
      now={now}
      height={height}
      isActive
      onDone={(done) => {
        onPicked(done.kind === 'open' ? done.id : undefined);
        // Once the last frame (what was chosen) is out.
        setImmediate(exit);
      }}
    />
  );
}
