// A local stand-in for the Anthropic Messages API (POST /v1/messages), scripted by a "brain".
// Shared by the provider's unit tests and the CLI's end-to-end tests, so it speaks real HTTP and
// real SSE framing: the point is to exercise the actual SDK, not a mock of it.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export interface FakeUsage {
  input_tokens?: number;
  output_tokens?: number;
  cache_creation_input_tokens?: number;
  cache_read_input_tokens?: number;
}

/** A successful reply. The fault fields may be combined with content (e.g. cut a tool call). */
export interface FakeReply {
  text?: string;
  toolUse?: { id?: string; name: string; input: unknown };
  usage?: FakeUsage;
  /** How many text_delta pieces the text is split into (default 2). */
  chunks?: number;
  stopReason?: string;
  /** Sent verbatim as the tool's input_json_delta pieces, instead of JSON of toolUse.input. */
  rawInputJson?: string;
  /** Send this many SSE frames (message_start counts as one), then destroy the socket. */
  cutAfterChunks?: number;
  /** Send response headers and `stallAfterChunks` frames (default 0), then nothing for this long. */
  stallMs?: number;
  stallAfterChunks?: number;
  /** Send an SSE `event: error` after `afterChunks` frames (default 1), then end the response. */
  errorEvent?: { type: string; message?: string; afterChunks?: number };
}

/** An HTTP error response with an Anthropic-shaped JSON body. */
export interface FakeHttpError {
  status: number;
  retryAfterSeconds?: number;
  headers?: Record<string, string>;
  /** Replaces the default `{type:'error', error:{type, message}}` body. */
  body?: unknown;
}

export type FakeScript = FakeReply | FakeHttpError;

/** The JSON body the client sent; only the fields the brain usually looks at are typed. */
export interface FakeRequestBody {
  model?: string;
  max_tokens?: number;
  system?: unknown;
  messages?: unknown[];
  tools?: unknown[];
  stream?: boolean;
  [key: string]: unknown;
}

export interface RecordedRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  body: FakeRequestBody;
}

export type FakeBrain = (body: FakeRequestBody, requestIndex: number) => FakeScript | Promise<FakeScript>;

export interface FakeMessagesApi {
  /** Base URL for the SDK (`baseURL` / ANTHROPIC_BASE_URL); the SDK appends /v1/messages. */
  readonly url: string;
  readonly requests: RecordedRequest[];
  close(): Promise<void>;
}

const ERROR_TYPES: Record<number, string> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  403: 'permission_error',
  404: 'not_found_error',
  413: 'request_too_large',
  429: 'rate_limit_error',
  529: 'overloaded_error',
};

export async function startFakeMessagesApi(opts: { brain: FakeBrain }): Promise<FakeMessagesApi> {
  const requests: RecordedRequest[] = [];
  const sockets = new Set<Socket>();
  const timers = new Set<NodeJS.Timeout>();
  let messageCount = 0;

  const server = createServer((req, res) => {
    void handle(req, res).catch((err: unknown) => {
      if (!res.headersSent) sendJson(res, 500, errorBody('api_error', `fake brain failed: ${String(err)}`));
      else res.destroy();
    });
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const raw = await readBody(req);
    const path = (req.url ?? '/').split('?')[0] ?? '/';
    let body: FakeRequestBody = {};
    try {
      body = raw ? (JSON.parse(raw) as FakeRequestBody) : {};
    } catch {
      // Recorded as empty; the 400 below tells the client what went wrong.
    }
    requests.push({ method: req.method ?? '', path, headers: flatHeaders(req), body });
    if (req.method !== 'POST' || path !== '/v1/messages') {
      sendJson(res, 404, errorBody('not_found_error', `no route ${req.method} ${path}`));
      return;
    }
    if (typeof body.model !== 'string' || !Array.isArray(body.messages)) {
      sendJson(res, 400, errorBody('invalid_request_error', 'model and messages are required'));
      return;
    }
    const script = await opts.brain(body, messageCount++);
    if ('status' in script) return sendFault(res, script);
    const id = `msg_fake_${messageCount}`;
    if (body.stream === true) streamReply(res, id, body.model, script);
    else sendJson(res, 200, wholeMessage(id, body.model, script));
  }

  function streamReply(res: ServerResponse, id: string, model: string, reply: FakeReply): void {
    let frames = sseFrames(id, model, reply);
    if (reply.errorEvent) {
      const { type, message, afterChunks = 1 } = reply.errorEvent;
      const error = { type: 'error', error: { type, message: message ?? `fake ${type}` } };
      frames = [...frames.slice(0, afterChunks), frame('error', error)];
    }
    const cut = reply.cutAfterChunks;
    const toSend = cut === undefined ? frames : frames.slice(0, cut);
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', 'request-id': `req_${id}` });
    res.flushHeaders();
    const finish = (part: string[]): void => {
      if (res.destroyed) return;
      if (cut === undefined) res.end(part.join(''));
      // Destroy only once the partial data is flushed, so the client really sees half a reply.
      else res.write(part.join(''), () => res.destroy());
    };
    if (reply.stallMs === undefined) return finish(toSend);
    const at = reply.stallAfterChunks ?? 0;
    if (at > 0) res.write(toSend.slice(0, at).join(''));
    timers.add(setTimeout(() => finish(toSend.slice(at)), reply.stallMs));
  }

  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        for (const t of timers) clearTimeout(t);
        // Keep-alive and stalled sockets would otherwise hold server.close() (and vitest) open.
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

function sendFault(res: ServerResponse, fault: FakeHttpError): void {
  const headers: Record<string, string> = { ...fault.headers };
  if (fault.retryAfterSeconds !== undefined) headers['retry-after'] = String(fault.retryAfterSeconds);
  const type = ERROR_TYPES[fault.status] ?? (fault.status >= 500 ? 'api_error' : 'invalid_request_error');
  sendJson(res, fault.status, fault.body ?? errorBody(type, `fake ${type}`), headers);
}

function sseFrames(id: string, model: string, reply: FakeReply): string[] {
  const usage = fullUsage(reply.usage);
  const out = [
    frame('message_start', {
      type: 'message_start',
      message: {
        ...messageShell(id, model),
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: { ...usage, output_tokens: Math.min(1, usage.output_tokens) },
      },
    }),
  ];
  let index = 0;
  if (reply.text !== undefined) {
    out.push(frame('content_block_start', { type: 'content_block_start', index, content_block: { type: 'text', text: '' } }));
    out.push(frame('ping', { type: 'ping' }));
    for (const piece of split(reply.text, reply.chunks ?? 2)) {
      out.push(delta(index, { type: 'text_delta', text: piece }));
    }
    out.push(frame('content_block_stop', { type: 'content_block_stop', index }));
    index++;
  }
  const tool = toolOf(reply, id);
  if (tool) {
    const block = { type: 'tool_use', id: tool.id, name: tool.name, input: {} };
    out.push(frame('content_block_start', { type: 'content_block_start', index, content_block: block }));
    // The real API opens with an empty partial_json, then sends the JSON in arbitrary slices.
    for (const piece of ['', ...split(tool.json, 3)]) {
      out.push(delta(index, { type: 'input_json_delta', partial_json: piece }));
    }
    out.push(frame('content_block_stop', { type: 'content_block_stop', index }));
  }
  out.push(
    frame('message_delta', {
      type: 'message_delta',
      delta: { stop_reason: stopReasonOf(reply), stop_sequence: null },
      usage: { output_tokens: usage.output_tokens },
    }),
    frame('message_stop', { type: 'message_stop' }),
  );
  return out;
}

function wholeMessage(id: string, model: string, reply: FakeReply): Record<string, unknown> {
  const content: unknown[] = [];
  if (reply.text !== undefined) content.push({ type: 'text', text: reply.text });
  const tool = toolOf(reply, id);
  if (tool) content.push({ type: 'tool_use', id: tool.id, name: tool.name, input: reply.toolUse?.input ?? {} });
  return {
    ...messageShell(id, model),
    content,
    stop_reason: stopReasonOf(reply),
    stop_sequence: null,
    usage: fullUsage(reply.usage),
  };
}

function toolOf(reply: FakeReply, id: string): { id: string; name: string; json: string } | undefined {
  if (!reply.toolUse && reply.rawInputJson === undefined) return undefined;
  return {
    id: reply.toolUse?.id ?? `toolu_${id}`,
    name: reply.toolUse?.name ?? 'fake_tool',
    json: reply.rawInputJson ?? JSON.stringify(reply.toolUse?.input ?? {}),
  };
}

function stopReasonOf(reply: FakeReply): string {
  return reply.stopReason ?? (toolOf(reply, '') ? 'tool_use' : 'end_turn');
}

function messageShell(id: string, model: string): Record<string, unknown> {
  return { id, type: 'message', role: 'assistant', model };
}

function fullUsage(u: FakeUsage = {}): Required<FakeUsage> {
  return {
    input_tokens: u.input_tokens ?? 10,
    output_tokens: u.output_tokens ?? 5,
    cache_creation_input_tokens: u.cache_creation_input_tokens ?? 0,
    cache_read_input_tokens: u.cache_read_input_tokens ?? 0,
  };
}

function frame(event: string, data: unknown): string {
  return `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
}

function delta(index: number, d: Record<string, unknown>): string {
  return frame('content_block_delta', { type: 'content_block_delta', index, delta: d });
}

/** Splits into at most `n` non-empty pieces on code-point boundaries (never halves an emoji). */
function split(s: string, n: number): string[] {
  const chars = Array.from(s);
  if (chars.length === 0) return [''];
  const size = Math.ceil(chars.length / Math.max(1, n));
  const pieces: string[] = [];
  for (let i = 0; i < chars.length; i += size) pieces.push(chars.slice(i, i + size).join(''));
  return pieces;
}

function errorBody(type: string, message: string): unknown {
  return { type: 'error', error: { type, message } };
}

function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
}

function flatHeaders(req: IncomingMessage): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(req.headers)) {
    if (v !== undefined) out[k] = Array.isArray(v) ? v.join(', ') : v;
  }
  return out;
}

async function readBody(req: IncomingMessage): Promise<string> {
  const parts: Buffer[] = [];
  for await (const chunk of req) parts.push(chunk as Buffer);
  return Buffer.concat(parts).toString('utf8');
}
