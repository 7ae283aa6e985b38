// A compacted thread through the real SDK and the fake Messages API, which refuses what the real
// one refuses (a result without its call, roles out of turn, thinking sent back under another
// prefix): the request after a compaction must carry the user's every message, the summary's
// sections and the latest turns, and be accepted.
import { describe, expect, it } from 'vitest';
import { AnthropicProvider } from './anthropic-provider.js';
import type { RuntimeEvent } from './events.js';
import { userText } from './input.js';
import { LocalSystem } from './local-system.js';
import { makeStore, type StoreKind } from './test-support/harness.js';
import { echoTool } from './test-support/tools.js';
import { startFakeMessagesApi, type FakeBrain, type FakeRequestBody, type RecordedRequest } from './testing/index.js';

type Block = { type: string; text?: string; id?: string; content?: Block[]; [k: string]: unknown };
type Msg = { role: string; content: Block[] };

const messagesOf = (body: FakeRequestBody) => (body.messages ?? []) as Msg[];
const textOf = (blocks: readonly Block[]): string =>
  blocks.map((b) => (b.type === 'text' ? b.text : b.type === 'tool_result' ? textOf(b.content ?? []) : '')).join('\n');
const allText = (body: FakeRequestBody) => messagesOf(body).map((m) => textOf(m.content)).join('\n');
const lastText = (body: FakeRequestBody) => textOf(messagesOf(body).at(-1)?.content ?? []);
const callIds = (body: FakeRequestBody) => messagesOf(body).flatMap((m) => m.content.filter((b) => b.type === 'tool_use').map((b) => b.id));

/** Tool results since the latest message of the user's own text. */
function roundsSinceUser(body: FakeRequestBody): number {
  let n = 0;
  for (const m of [...messagesOf(body)].reverse()) {
    if (m.role !== 'user') continue;
    if (m.content.some((b) => b.type === 'text')) break;
    n++;
  }
  return n;
}

const SECTIONED =
  '## Goal\nA CSV parser.\n## Current work\nQuoted fields in src/csv.ts.\n## Next step\nRun the tests.\n' +
  '## Files\nsrc/csv.ts (parser)\n## Errors\nNone open.\n## Decisions\nNo dependencies.\n## Pending\nNone.';

/** Answers each user message after `rounds` echo calls (long arguments); summarises in sections. */
function worker(rounds: number): FakeBrain {
  return (body) => {
    if (lastText(body).includes('compaction thread')) return { text: SECTIONED };
    if (roundsSinceUser(body) < rounds) return { text: 'Echoing.', toolUse: { name: 'echo', input: { text: 'z'.repeat(700) } } };
    return { text: `Answered after ${rounds} calls.` };
  };
}

function expectAccepted(requests: RecordedRequest[]): void {
  for (const r of requests) {
    expect(r.error, `request ${requests.indexOf(r)}`).toBeUndefined();
    expect(r.status).toBe(200);
    // Nothing was sent that the API had to leave out (thinking under a prefix it wasn't written for).
    expect(r.dropped ?? []).toEqual([]);
  }
}

async function run(storeKind: StoreKind, rounds: number, asked: readonly string[], after: readonly string[]) {
  const api = await startFakeMessagesApi({ brain: worker(rounds) });
  const { store, cleanup } = makeStore(storeKind);
  const events: RuntimeEvent[] = [];
  const system = new LocalSystem({
    store,
    provider: new AnthropicProvider({ apiKey: 'test-key', baseURL: api.url }),
    tools: [echoTool()],
    model: 'claude-sonnet-5-5',
    retry: { baseDelayMs: 1, maxDelayMs: 5 },
  });
  system.subscribe((e) => events.push(e));
  await system.start();
  const say = async (text: string, id: string) => {
    await system.send([userText('t', text, id)]);
    await system.whenIdle();
  };
  for (const [i, text] of asked.entries()) await say(text, `a${i}`);
  const before = (await store.loadThread('t'))!.history;
  await system.compact('t');
  await system.whenIdle();
  for (const [i, text] of after.entries()) await say(text, `b${i}`);
  const requests = [...api.requests];
  await system.close();
  await api.close();
  cleanup();
  return { requests, events, before };
}

const ASKED = [
  'Build a CSV parser in src/csv.ts, without dependencies.',
  'Handle quoted fields too.',
  'Semicolons as separators when the file says so.',
  'Now add tests for all of it.',
];

describe.each<StoreKind>(['memory', 'sqlite'])('a compacted thread on the Messages API with the %s store', (storeKind) => {
  it("carries the task, every user message, the summary's sections and the last exchange, and is accepted", async () => {
    const { requests, events, before } = await run(storeKind, 1, ASKED, ['Run them and fix what fails.', 'Commit it.']);
    expectAccepted(requests);
    expect(events.some((e) => e.type === 'compaction-applied')).toBe(true);

    const compaction = requests.find((r) => lastText(r.body).includes('compaction thread'))!;
    for (const heading of ['## Current work', '## Next step', '## Files', '## Errors']) expect(lastText(compaction.body)).toContain(heading);

    const next = requests.find((r) => lastText(r.body) === 'Run them and fix what fails.')!;
    const [head] = messagesOf(next.body);
    // The summary and its record lead; no result stands in the first message.
    expect(head.content[0].text).toContain(SECTIONED);
    expect(head.content.some((b) => b.type === 'tool_result')).toBe(false);
    for (const text of ASKED.slice(0, 3)) expect(head.content[0].text).toContain(`<user_message>\n${text}\n</user_message>`);
    expect(head.content[0].text!.indexOf(ASKED[0])).toBeLessThan(head.content[0].text!.indexOf(ASKED[2]));
    for (const text of [...ASKED, 'Run them and fix what fails.']) expect(allText(next.body)).toContain(text);
    // The last exchange as it was: its call and result, without the thinking bound to the old prefix.
    const beforeCalls = before.flatMap((m) => m.content).filter((b) => b.type === 'tool_use');
    expect(callIds(next.body)).toEqual([beforeCalls.at(-1)!.id]);
    expect(messagesOf(next.body).flatMap((m) => m.content).some((b) => b.type === 'thinking')).toBe(false);

    // The reply made after the switch keeps its thinking, and the API takes it back.
    const later = requests.find((r) => lastText(r.body) === 'Commit it.')!;
    const replies = messagesOf(later.body).filter((m) => m.role === 'assistant');
    expect(replies.at(-1)!.content[0].type).toBe('thinking');
    expect(allText(later.body)).toContain(ASKED[0]);
  });

  it('keeps the end of one long exchange, starting at a reply, and is accepted', async () => {
    const { requests, before } = await run(storeKind, 8, ['Echo eight times, then say so.'], ['And once more?', 'Thanks.']);
    expectAccepted(requests);
    const next = requests.find((r) => lastText(r.body) === 'And once more?')!;
    const messages = messagesOf(next.body);
    expect(messages[0].content[0].text).toContain('<user_message>\nEcho eight times, then say so.\n</user_message>');
    // The summary, then the model's latest calls with their results: some kept, the older not.
    expect(messages[1].role).toBe('assistant');
    const kept = callIds(next.body);
    const all = before.flatMap((m) => m.content).flatMap((b) => (b.type === 'tool_use' ? [b.id] : []));
    expect(kept.length).toBeGreaterThan(0);
    expect(kept.length).toBeLessThan(all.length);
    expect(kept).toEqual(all.slice(-kept.length));
  });
});
