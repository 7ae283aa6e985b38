// A local stand-in for the Anthropic Messages API (POST /v1/messages), scripted by a "brain".
// Shared by the provider's unit tests and the CLI's end-to-end tests, so it speaks real HTTP and
// real SSE framing: the point is to exercise the actual SDK, not a mock of it. Like the December
// 2026 service, for the models in the table (models.ts) it refuses what they refuse, answers with
// signed thinking blocks and checks them when they come back; for any id it rejects malformed
// histories, accounts prompt caching and may take its time. Ids outside the table are served as
// in 2025, so a model newer than the table still goes through.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { buildReply } from './build-reply.js';
import type { FakeHttpError, FakeMessagesApi, FakeMessagesApiOptions, FakeReply, FakeRequestBody, RecordedRequest } from './fake-types.js';
import { frameSchedule, replyTiming, type ReplyTiming } from './pacing.js';
import { PromptCache } from './prompt-cache.js';
import { errorFrame, sseFrames, wholeMessage, type ReplyShape } from './reply-frames.js';
import { ReplyMemory } from './reply-memory.js';
import { checkRequest } from './request-checks.js';
import type { DroppedBlock } from './thinking-binding.js';
import { simulatedUsage } from './simulated-usage.js';

const ERROR_TYPES: Record<number, string> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  403: 'permission_error',
  404: 'not_found_error',
  413: 'request_too_large',
  429: 'rate_limit_error',
  529: 'overloaded_error',
};

export async function startFakeMessagesApi(opts: FakeMessagesApiOptions): Promise<FakeMessagesApi> {
  const requests: RecordedRequest[] = [];
  const sockets = new Set<Socket>();
  const timers = new Set<NodeJS.Timeout>();
  const cache = opts.cache === false ? undefined : new PromptCache(opts);
  const memory = new ReplyMemory();
  const now = opts.now ?? Date.now;
  let messageCount = 0;

  const server = createServer((req, res) => {
    void handle(req, res).catch((err: unknown) => {
      if (!res.headersSent) sendJson(res, 500, errorBody('api_error', `fake brain failed: ${String(err)}`));
      else res.destroy();
    });
  });

  /** Runs `fn` after `ms`, or at once for no delay; close() cancels what is still pending. */
  function later(ms: number, fn: () => void): void {
    if (ms <= 0) return fn();
    const t = setTimeout(() => {
      timers.delete(t);
      fn();
    }, ms);
    timers.add(t);
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const raw = await readBody(req);
    const path = (req.url ?? '/').split('?')[0] ?? '/';
    let body: FakeRequestBody = {};
    try {
      body = raw ? (JSON.parse(raw) as FakeRequestBody) : {};
    } catch {
      // Recorded as empty; the 400 below tells the client what went wrong.
    }
    const record: RecordedRequest = { method: req.method ?? '', path, headers: flatHeaders(req), body };
    requests.push(record);
    if (req.method !== 'POST' || path !== '/v1/messages') {
      record.status = 404;
      sendJson(res, 404, errorBody('not_found_error', `no route ${req.method} ${path}`));
      return;
    }
    if (typeof body.model !== 'string' || !Array.isArray(body.messages)) {
      Object.assign(record, { status: 400, error: 'model and messages are required' });
      sendJson(res, 400, errorBody('invalid_request_error', 'model and messages are required'));
      return;
    }
    let dropped: DroppedBlock[] = [];
    if (opts.strict !== false) {
      const verdict = checkRequest(body, record.headers, memory);
      if (!verdict.ok) {
        Object.assign(record, { status: verdict.status, error: verdict.message });
        sendJson(res, verdict.status, errorBody(verdict.type, verdict.message));
        return;
      }
      dropped = verdict.dropped;
      record.dropped = dropped;
    }
    // Numbered before the brain thinks: replies to concurrent requests must not share an id (a
    // tool call's id is made from it, and the API never repeats one).
    const index = messageCount++;
    const script = await opts.brain(body, index);
    if ('status' in script) {
      record.status = script.status;
      return sendFault(res, script);
    }
    const { shape, sent } = buildReply({
      body,
      headers: record.headers,
      script,
      id: `msg_fake_${index + 1}`,
      dropped,
      usage: (prompt, output) => simulatedUsage(cache, prompt, now(), output, script.usage),
    });
    // Filed only once the reply has gone out whole, and before its last byte, so the client's
    // next request already finds it.
    const keep = (): void => {
      if (sent) memory.remember(sent, shape.stopReason, body);
    };
    const timing = opts.latency && replyTiming(opts.latency, shape.usage);
    Object.assign(record, { status: 200, usage: shape.usage, ...(timing && { delay: timing }) });
    if (body.stream === true) streamReply(res, shape, script, timing, keep);
    else {
      later(timing?.lastByteMs ?? 0, () => {
        if (!res.destroyed) keep();
        sendJson(res, 200, wholeMessage(shape));
      });
    }
  }

  function streamReply(res: ServerResponse, shape: ReplyShape, reply: FakeReply, timing: ReplyTiming | undefined, keep: () => void): void {
    let frames = sseFrames(shape);
    const totalChars = frames.reduce((n, f) => n + f.outChars, 0);
    if (reply.errorEvent) {
      const { type, message, afterChunks = 1 } = reply.errorEvent;
      frames = [...frames.slice(0, afterChunks), errorFrame(type, message ?? `fake ${type}`)];
    }
    const cut = reply.cutAfterChunks;
    const toSend = cut === undefined ? frames : frames.slice(0, cut);
    const outChars = toSend.map((f) => f.outChars);
    const due = timing ? frameSchedule(timing, outChars, totalChars) : outChars.map(() => 0);
    if (reply.stallMs !== undefined) {
      const at = reply.stallAfterChunks ?? 0;
      for (let i = at; i < due.length; i++) due[i] += reply.stallMs;
    }
    const finish = (part: string): void => {
      if (cut === undefined) {
        if (!reply.errorEvent) keep();
        res.end(part);
      }
      // Destroy only once the partial data is flushed, so the client really sees half a reply.
      else res.write(part, () => res.destroy());
    };
    /** Writes the frames due by `at` from `i` on, then waits for the next one. */
    const sendFrom = (i: number, at: number): void => {
      if (res.destroyed) return;
      let j = i;
      while (j < toSend.length && due[j] <= at) j++;
      const part = toSend.slice(i, j).map((f) => f.text).join('');
      if (j === toSend.length) return finish(part);
      if (part) res.write(part);
      later(due[j] - at, () => sendFrom(j, due[j]));
    };
    const headersAt = timing?.firstByteMs ?? 0;
    later(headersAt, () => {
      if (res.destroyed) return;
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', 'request-id': `req_${shape.id}` });
      res.flushHeaders();
      if (reply.pingEveryMs !== undefined) keepAlive(res, reply.pingEveryMs);
      sendFrom(0, headersAt);
    });
  }

  /** Pings until the response is over, between (never inside) the reply's frames. */
  function keepAlive(res: ServerResponse, everyMs: number): void {
    const t = setInterval(() => {
      if (res.writableEnded || res.destroyed) return;
      res.write('event: ping\ndata: {"type": "ping"}\n\n');
    }, everyMs);
    timers.add(t);
    res.once('close', () => {
      clearInterval(t);
      timers.delete(t);
    });
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
        timers.clear();
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

function errorBody(type: string, message: string): unknown {
  return { type: 'error', error: { type, message } };
}

function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  if (res.destroyed) return;
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
