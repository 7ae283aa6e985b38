import { threadStackOf, type HistoryMessage, type ScriptedReply } from '@infinity-code/runtime';

/**
 * The demo's model decisions (a scripted brain), also used by the end-to-end tests: the root
 * spawns two children that edit different files in parallel, runs the tests in the background,
 * waits for the reports and the test result, then summarises. Works on anything shaped like a
 * Messages API request, so it drives both the scripted provider and the fake API server.
 */
export function demoBrain(r: { system: unknown; messages: readonly HistoryMessage[] }): ScriptedReply {
  const stack = threadStackOf(r) ?? [];
  const threadId = stack.at(-1) ?? 'root';
  return stack.length > 1 ? childTurn(threadId, r.messages) : rootTurn(stack, r.messages);
}

const GREETING_TASK = 'In greet.js, make greet(name) return `Hello, ${name}!` (it returns lowercase "hi name").';
const FAREWELL_TASK = 'Create farewell.js exporting farewell(name) that returns `Goodbye, ${name}!`.';

function texts(messages: readonly HistoryMessage[]): string[] {
  return messages.flatMap((m) =>
    m.content.flatMap((b) => {
      if (b.type === 'text') return [b.text];
      if (b.type === 'tool_result') return b.content.flatMap((c) => (c.type === 'text' ? [c.text] : []));
      return [];
    }),
  );
}

function calls(messages: readonly HistoryMessage[]): Array<{ name: string; input: Record<string, unknown> }> {
  return messages.flatMap((m) => m.content.flatMap((b) => (b.type === 'tool_use' ? [{ name: b.name, input: b.input }] : [])));
}

/**
 * Calls whose result was not an error: a call cut short (say, by a restart) is made again, as a
 * model reading "it may have partly run" would.
 */
function succeeded(messages: readonly HistoryMessage[]): Array<{ name: string; input: Record<string, unknown> }> {
  // "Already exists" or "not found" after a retry means the first attempt did its work.
  const done = /already exists|not found|no match/i;
  const failed = new Set(
    messages.flatMap((m) =>
      m.content.flatMap((b) =>
        b.type === 'tool_result' && b.is_error && !b.content.some((c) => c.type === 'text' && done.test(c.text))
          ? [b.tool_use_id]
          : [],
      ),
    ),
  );
  return messages.flatMap((m) =>
    m.content.flatMap((b) => (b.type === 'tool_use' && !failed.has(b.id) ? [{ name: b.name, input: b.input }] : [])),
  );
}

function rootTurn(stack: string[], messages: readonly HistoryMessage[]): ScriptedReply {
  const made = calls(messages).map((c) => c.name);
  const spawns = made.filter((n) => n === 'spawn_thread').length;
  if (spawns === 0) {
    return {
      text: "I'll split this in two: one child fixes the greeting while another adds a farewell. Meanwhile I run the tests.",
      toolCall: { name: 'spawn_thread', input: { instructions: GREETING_TASK, child_of: stack } },
    };
  }
  if (spawns === 1) return { toolCall: { name: 'spawn_thread', input: { instructions: FAREWELL_TASK, child_of: stack } } };
  if (!succeeded(messages).some((c) => c.name === 'execute_command')) {
    return { text: 'Both children are at work. Running the tests in the background.', toolCall: { name: 'execute_command', input: { command: 'node test.js', description: 'run the tests', run_in_background: true } } };
  }
  const all = texts(messages).join('\n');
  const reports = (all.match(/has shut down/g) ?? []).length;
  const testsDone = /\[exit code: \d+\]/.test(all);
  if (reports < 2 || !testsDone) return { toolCall: { name: 'sleep_until_event_or_input', input: {} } };
  return { text: summary(all) };
}

/** The closing answer, true to what the review decided (a rejected file is named with its reason). */
function summary(all: string): string {
  const rejected = new Map([...all.matchAll(/Rejected ([^\s#]+)#\d+: ([^\n]*?)\.?$/gm)].map((m) => [m[1], m[2]]));
  const changes = [
    { file: 'greet.js', what: 'greet() now says "Hello, <name>!"' },
    { file: 'farewell.js', what: 'farewell.js adds farewell(name)' },
  ];
  const kept = changes.filter((c) => !rejected.has(c.file)).map((c) => c.what);
  const dropped = changes.filter((c) => rejected.has(c.file)).map((c) => `${c.file} (you rejected it: "${rejected.get(c.file)}")`);
  const parts = [
    kept.length > 0 ? `${kept.join(' and ')}; merged into my sandbox after review.` : 'Nothing was merged.',
    dropped.length > 0 ? `Left out: ${dropped.join(', ')}.` : '',
    'The tests ran in the background meanwhile.',
  ];
  return `Done. ${parts.filter(Boolean).join(' ')}`;
}

function childTurn(threadId: string, messages: readonly HistoryMessage[]): ScriptedReply {
  // The child's history is its parent's up to the spawn call, then the instructions (as that
  // call's result), then its own turns.
  const seedAt = messages.findIndex((m) => texts([m]).some((t) => t.startsWith('You are now inside the thread you asked to create')));
  const task = texts(messages.slice(seedAt, seedAt + 1)).join('\n');
  const own = succeeded(messages.slice(seedAt + 1));
  if (task.includes('greet.js')) {
    if (own.length === 0) return { text: 'Reading greet.js.', toolCall: { name: 'read_file', input: { path: 'greet.js' } } };
    if (own.length === 1) {
      return {
        toolCall: { name: 'edit_file', input: { path: 'greet.js', old_str: "return 'hi ' + name;", new_str: 'return `Hello, ${name}!`;' } },
      };
    }
    return { toolCall: { name: 'close_thread', input: { thread_id: threadId, report_to_parent: 'greet() now returns `Hello, ${name}!`.' } } };
  }
  if (own.length === 0) {
    return {
      text: 'Creating farewell.js.',
      toolCall: {
        name: 'create_file',
        input: { path: 'farewell.js', content: 'export function farewell(name) {\n  return `Goodbye, ${name}!`;\n}\n' },
      },
    };
  }
  return { toolCall: { name: 'close_thread', input: { thread_id: threadId, report_to_parent: 'Added farewell.js with farewell(name).' } } };
}

/** Files of the demo's sample repository. */
export const DEMO_FILES: Record<string, string> = {
  'greet.js': "export function greet(name) {\n  return 'hi ' + name;\n}\n",
  'test.js':
    "// Prints progress while it checks, so a run takes a few seconds (and goes to the background).\n" +
    "import { greet } from './greet.js';\n" +
    "const steps = Number(process.env.DEMO_TEST_STEPS ?? 8);\n" +
    "for (let i = 1; i <= steps; i++) {\n" +
    "  await new Promise((r) => setTimeout(r, 700));\n" +
    "  console.log(`check ${i}/${steps} ok`);\n" +
    "}\n" +
    "console.log(`greet('Ada') = ${greet('Ada')}`);\n",
  'package.json': '{ "name": "demo", "private": true, "type": "module" }\n',
};
