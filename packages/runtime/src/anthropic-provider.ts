import type Anthropic from '@anthropic-ai/sdk';
import type { APIError } from '@anthropic-ai/sdk';
import type { Middleware } from '@anthropic-ai/sdk/core/middleware';
import { EPHEMERAL, markedMessages, withMessageBreakpoints } from './cache-breakpoints.js';
import { connectFailure, unreachableMessage } from './connect-failure.js';
import { ModelError } from './errors.js';
import { mark, timed } from './timing.js';
import type { HistoryMessage } from './messages.js';
import { modelInfo } from './models.js';
import type { CompletionRequest, ModelProvider, StreamEvent, StreamWatch } from './provider.js';
import { clip, TurnReader } from './reply-reader.js';
import type { ToolDefinition } from './tool.js';

export interface AnthropicProviderOptions {
  /** Defaults to ANTHROPIC_API_KEY (read by the SDK). */
  apiKey?: string;
  /** A bearer token (ANTHROPIC_AUTH_TOKEN) in place of an API key, as gateways and proxies issue. */
  authToken?: string;
  /** Defaults to ANTHROPIC_BASE_URL, then the public API (read by the SDK). */
  baseURL?: string;
  /**
   * Longest wait for the response headers, and then for each next stream event. The SDK's own
   * timeout stops at the headers; a server that goes silent mid-reply must not hang a thread.
   */
  timeoutMs?: number;
  /**
   * Mark the tools, the system prompt, the thread's previous request and this request for prompt
   * caching (default true): users pay a tenth of the input price for what is read from cache.
   */
  promptCaching?: boolean;
  /**
   * Called each time a request has been handed to the HTTP client (which may still be connecting
   * and writing it): work that would have competed with sending it may start now (the CLI opens
   * its sandboxes).
   */
  onRequest?: () => void;
  /**
   * Called once, when the HTTP client is loaded and before its first connection: the moment for
   * the program's process-wide settings that concern it (the CLI tunes how V8 compiles fetch's
   * HTTP parser). A library makes no such setting itself.
   */
  beforeFirstConnection?: () => void;
}

const DEFAULT_TIMEOUT_MS = 10 * 60 * 1000;

type SdkModule = typeof import('./anthropic-sdk.js');
interface Sdk {
  mod: SdkModule;
  client: InstanceType<SdkModule['BaseAnthropic']>;
  messages: InstanceType<SdkModule['Messages']>;
}

/** The `anthropic` provider: one streamed Messages API call per completion, through the real SDK. */
export class AnthropicProvider implements ModelProvider {
  readonly name = 'anthropic';
  readonly #timeoutMs: number;
  readonly #caching: boolean;
  readonly #opts: AnthropicProviderOptions;
  #sdk: Promise<Sdk> | undefined;
  /**
   * Whether the API ever answered (any HTTP status). Until it has, a connection that can't be
   * made is a wrong address ('unreachable': fail fast); after, it is the network going away for
   * a while ('network': retried with the long budget).
   */
  #reached = false;
  /** System prompts (one per session) of conversations whose stale thinking the API is asked to drop. */
  readonly #dropping = new Set<string>();

  constructor(opts: AnthropicProviderOptions = {}) {
    this.#timeoutMs = opts.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.#caching = opts.promptCaching ?? true;
    this.#opts = opts;
  }

  /**
   * Loads the SDK and Node's HTTP client (fetch, loaded by Node on first use) in the background.
   * Start-up before anything is sent (the TUI's first frame) does not pay for them; the first
   * request no longer waits for them either when this was called early enough.
   */
  warm(): void {
    void this.#load().catch(() => undefined);
  }

  /** The SDK is loaded on first use (or warm()), its Messages call alone (see anthropic-sdk.ts). */
  #load(): Promise<Sdk> {
    this.#sdk ??= import('./anthropic-sdk.js').then((mod) => {
      // Node loads its fetch implementation (undici, ~40 ms of CPU) when one of its classes is
      // first touched, which the SDK does on every request: here, off the first request's path.
      void globalThis.Response;
      this.#opts.beforeFirstConnection?.();
      const client = new mod.BaseAnthropic({
        ...(this.#opts.apiKey !== undefined && { apiKey: this.#opts.apiKey }),
        ...(this.#opts.authToken !== undefined && { authToken: this.#opts.authToken }),
        ...(this.#opts.baseURL !== undefined && { baseURL: this.#opts.baseURL }),
        timeout: this.#timeoutMs,
        // The runtime retries itself: it must discard a partly streamed turn first, which the SDK can't.
        maxRetries: 0,
        ...(this.#opts.onRequest !== undefined && { fetch: announcedFetch(this.#opts.onRequest) }),
      });
      return { mod, client, messages: new mod.Messages(client) };
    });
    return this.#sdk;
  }

  /** Which variables the credentials came from, for the message when the API rejects them. */
  #credentials(): string {
    const token = this.#opts.authToken !== undefined;
    const key = this.#opts.apiKey !== undefined || !token;
    return token && key ? 'ANTHROPIC_API_KEY and ANTHROPIC_AUTH_TOKEN' : token ? 'ANTHROPIC_AUTH_TOKEN' : 'ANTHROPIC_API_KEY';
  }

  /**
   * Sends the request. Should something under a conversation's thinking have changed (a tool
   * server's tools, the project's instructions since the session started, another version of
   * this program), the API refuses those blocks: the conversation then goes on without them
   * rather than failing at every request, and asks so from then on (the blocks stay in its
   * history). Its threads share the system prompt, which names the session.
   */
  async #send(sdk: Sdk, request: CompletionRequest, signal: AbortSignal, watch?: StreamWatch): Promise<AsyncIterable<Anthropic.RawMessageStreamEvent>> {
    const params = toParams(request, this.#caching);
    const middleware = watch ? [watchedBody(watch)] : [];
    const dropping = () =>
      sdk.messages.create(withDroppedMismatches(params), { signal, middleware, headers: { 'anthropic-beta': BETA_BINDING_CONTROLS } });
    if (this.#dropping.has(request.system)) return dropping();
    try {
      return await sdk.messages.create(params, { signal, middleware });
    } catch (err) {
      if (!(err instanceof sdk.mod.APIError && isBindingMismatch(err))) throw err;
      mark('thinking-dropped', () => clip(typeof err.apiMessage === 'string' ? err.apiMessage : ''));
      if (this.#dropping.size >= MAX_DROPPING) this.#dropping.clear();
      this.#dropping.add(request.system);
      return dropping();
    }
  }

  async *stream(request: CompletionRequest, signal: AbortSignal, watch?: StreamWatch): AsyncGenerator<StreamEvent> {
    signal.throwIfAborted();
    // One controller for both the caller's cancel and our idle timer, so either stops the body read.
    const ctrl = new AbortController();
    const onAbort = (): void => ctrl.abort();
    signal.addEventListener('abort', onAbort, { once: true });
    let idle: NodeJS.Timeout | undefined;
    let timedOut = false;
    const pauseIdle = (): void => clearTimeout(idle);
    const armIdle = (): void => {
      pauseIdle();
      idle = setTimeout(() => {
        timedOut = true;
        ctrl.abort();
      }, this.#timeoutMs);
    };
    // The SDK swallows an abort while reading the body and just ends the stream, so every exit
    // path first asks whether we stopped it ourselves; a caller's abort is rethrown unclassified.
    const interrupted = (): unknown => {
      if (signal.aborted) return abortReason(signal);
      if (timedOut) return new ModelError('timeout', `The model API went silent for ${this.#timeoutMs} ms while streaming a reply.`);
      return undefined;
    };
    const sdk = await this.#load();
    const baseURL = sdk.client.baseURL;
    const sentAt = performance.now();
    mark('model-request', () => `${request.messages.length} messages`);

    try {
      let events: AsyncIterable<Anthropic.RawMessageStreamEvent>;
      try {
        events = await this.#send(sdk, request, ctrl.signal, watch);
        this.#reached = true;
      } catch (err) {
        if (err instanceof sdk.mod.APIError && err.status !== undefined) this.#reached = true;
        // eslint-disable-next-line @typescript-eslint/only-throw-error -- the abort reason the caller gave is rethrown as it is
        throw interrupted() ?? toModelError(sdk.mod, err, baseURL, this.#reached, this.#credentials());
      }
      const turn = new TurnReader();
      let told = false;
      try {
        armIdle();
        for await (const event of events) {
          // The SDK may still hold parsed events after an abort; none of them may reach the caller.
          if (ctrl.signal.aborted) break;
          pauseIdle(); // a slow consumer is not a silent server
          for (const out of turn.read(event)) {
            // Here, not after the loop: the caller may stop reading once the reply is complete.
            if (turn.finished && !told) {
              told = true;
              timed('model-reply', sentAt);
            }
            yield out;
          }
          armIdle();
        }
      } catch (err) {
        // eslint-disable-next-line @typescript-eslint/only-throw-error -- the abort reason the caller gave is rethrown as it is
        throw interrupted() ?? toModelError(sdk.mod, new StreamBroken(err), baseURL, true);
      }
      pauseIdle();
      if (!turn.finished) {
        // eslint-disable-next-line @typescript-eslint/only-throw-error -- the abort reason the caller gave is rethrown as it is
        throw interrupted() ?? new ModelError('stream_cut', 'The model API ended the reply before it was complete.');
      }
    } finally {
      pauseIdle();
      signal.removeEventListener('abort', onAbort);
    }
  }
}

export function toParams(request: CompletionRequest, caching = true): Anthropic.MessageCreateParamsStreaming {
  const tools = request.tools.map(toSdkTool);
  // The system prompt's mark caches the tools too (they come first); it names only the session's
  // root, so every thread of the session shares it.
  const system = caching ? [{ type: 'text' as const, text: request.system, cache_control: EPHEMERAL }] : request.system;
  const messages = caching ? withMessageBreakpoints(request.messages, markedMessages(request.messages)) : request.messages;
  return {
    model: request.model,
    max_tokens: request.maxTokens,
    ...(request.system !== '' && { system }),
    messages: wire(messages),
    tools,
    ...thinkingParams(request),
    stream: true,
  };
}

/**
 * What a model that thinks is asked for: adaptive thinking (on by default on current models,
 * said so the display can be chosen) and the effort. Nothing a model refuses is sent: no
 * budget, no `disabled`, no sampling parameters, and effort only where the table lists it (an
 * unknown model gets what the user set, since new models take it).
 */
function thinkingParams(request: CompletionRequest): Pick<Anthropic.MessageCreateParamsStreaming, 'thinking' | 'output_config'> {
  const info = modelInfo(request.model);
  const effort = request.effort;
  const sendEffort = effort !== undefined && (info === undefined || info.efforts.includes(effort));
  return {
    ...(info?.thinking === 'adaptive' && {
      thinking: { type: 'adaptive' as const, display: request.thinkingDisplay ?? 'summarized' },
    }),
    ...(sendEffort && { output_config: { effort } }),
  };
}

const BETA_BINDING_CONTROLS = 'thinking-binding-controls-2026-08-01';
/** Sessions remembered as needing drop_block; past it the memory starts over (a 400 each re-learns). */
const MAX_DROPPING = 256;

/** The 400 of a thinking block whose prefix changed since it was made (not a damaged signature). */
function isBindingMismatch(err: { status?: unknown; apiMessage?: unknown; message: string }): boolean {
  const message = typeof err.apiMessage === 'string' ? err.apiMessage : err.message;
  return err.status === 400 && /bound to a different conversation/.test(message);
}

/** The same request, asking the API to drop thinking blocks whose prefix changed instead of refusing it. */
function withDroppedMismatches(params: Anthropic.MessageCreateParamsStreaming): Anthropic.MessageCreateParamsStreaming {
  if (params.thinking?.type !== 'adaptive') return params;
  const thinking = { ...params.thinking, block_binding: { prefix_mismatch_behavior: 'drop_block' } };
  return { ...params, thinking };
}

/** HistoryMessage is declared in the Messages API's wire shape (messages.ts): no conversion. */
function wire(messages: readonly HistoryMessage[]): Anthropic.MessageParam[] {
  return messages as Anthropic.MessageParam[];
}

function toSdkTool(tool: ToolDefinition): Anthropic.Tool {
  // Copied because our `required` is readonly and the SDK's type wants a mutable array.
  const { required, ...schema } = tool.input_schema;
  const input_schema = required ? { ...schema, required: [...required] } : schema;
  return { name: tool.name, description: tool.description, input_schema };
}

/** Node's fetch, calling `onRequest` once it has a request. */
function announcedFetch(onRequest: () => void): typeof fetch {
  return (input, init) => {
    const response = fetch(input, init);
    onRequest();
    return response;
  };
}

/**
 * Tells `watch` of the response and of every chunk of its body as it is read: the SDK drops
 * keep-alive pings before its events, and a tool call's input yields nothing until it is whole,
 * so the events alone would take a model thinking or writing a long file for a silent stream.
 */
function watchedBody(watch: StreamWatch): Middleware {
  return async (request, next) => {
    const response = await next(request);
    watch.onData();
    if (!response.body) return response;
    const counted = response.body.pipeThrough(
      new TransformStream<Uint8Array, Uint8Array>({
        transform(chunk, out) {
          watch.onData();
          out.enqueue(chunk);
        },
      }),
    );
    return new Response(counted, response);
  };
}

/** Marks a failure while reading the body: a non-API error there means the reply was cut. */
class StreamBroken {
  constructor(readonly cause: unknown) {}
}

/** `reached`: the API has answered this provider before (see AnthropicProvider.#reached). */
function toModelError(sdk: SdkModule, raw: unknown, baseURL: string, reached: boolean, credentials = 'ANTHROPIC_API_KEY'): ModelError {
  const { APIConnectionError, APIConnectionTimeoutError, APIError } = sdk;
  const midStream = raw instanceof StreamBroken;
  const err = midStream ? raw.cause : raw;
  if (err instanceof ModelError) return err;
  if (err instanceof APIConnectionTimeoutError) {
    return new ModelError('timeout', `The model API at ${baseURL} did not respond in time.`, { cause: err });
  }
  if (err instanceof APIConnectionError) {
    const failure = reached ? undefined : connectFailure(err, baseURL);
    if (failure) return new ModelError('unreachable', unreachableMessage(baseURL, failure), { cause: err });
    return new ModelError('network', `Could not reach the model API at ${baseURL} (${rootCause(err)}).`, { cause: err });
  }
  // eslint-disable-next-line @typescript-eslint/no-unsafe-argument -- the SDK types an error's body as any; fromApiError reads only its status and message
  if (err instanceof APIError) return fromApiError(err, credentials);
  if (midStream && err instanceof SyntaxError) {
    return new ModelError('server', 'The model API sent a malformed stream event.', { cause: err });
  }
  if (midStream) {
    return new ModelError('stream_cut', `The connection to the model API broke mid-reply (${rootCause(err)}).`, { cause: err });
  }
  const message = err instanceof Error ? err.message : String(err);
  if (/resolve authentication/i.test(message)) {
    return new ModelError('auth', 'No Anthropic credentials were found; set ANTHROPIC_API_KEY.', { cause: err });
  }
  return new ModelError('other', `The model request failed: ${clip(message)}.`, { cause: err });
}

/** `credentials`: the variable(s) the key came from, for the message when it is rejected. */
function fromApiError(err: APIError, credentials: string): ModelError {
  const status = err.status;
  const type = err.type;
  const detail = `(${[status, clip(err.apiMessage ?? type ?? 'no details')].filter(Boolean).join(': ')})`;
  const opts = { status, cause: err };
  if (status === 529 || type === 'overloaded_error') {
    return new ModelError('overloaded', `The model API is overloaded ${detail}.`, opts);
  }
  if (status === 429 || type === 'rate_limit_error') {
    const retryAfterMs = retryAfter(err.headers);
    return new ModelError('rate_limit', `The model API rate limit was reached ${detail}.`, {
      ...opts,
      ...(retryAfterMs !== undefined && { retryAfterMs }),
    });
  }
  if (status === 401 || status === 403 || type === 'authentication_error' || type === 'permission_error') {
    return new ModelError('auth', `The model API rejected the credentials ${detail}; check ${credentials}.`, opts);
  }
  if (status === 408 || type === 'timeout_error') {
    return new ModelError('timeout', `The model API timed out ${detail}.`, opts);
  }
  if (
    [400, 404, 413, 422].includes(status ?? 0) ||
    type === 'invalid_request_error' ||
    type === 'not_found_error'
  ) {
    return new ModelError('invalid_request', `The model API rejected the request ${detail}.`, opts);
  }
  if ((status !== undefined && status >= 500) || type === 'api_error') {
    return new ModelError('server', `The model API had an internal error ${detail}.`, opts);
  }
  return new ModelError('other', `The model API returned an error ${detail}.`, opts);
}

/** `retry-after-ms` (non-standard, precise) wins over `retry-after` (seconds or an HTTP date). */
function retryAfter(headers: Headers | undefined): number | undefined {
  const ms = Number.parseFloat(headers?.get('retry-after-ms') ?? '');
  if (Number.isFinite(ms) && ms >= 0) return ms;
  const value = headers?.get('retry-after')?.trim();
  if (!value) return undefined;
  if (/^\d+(\.\d+)?$/.test(value)) return Number.parseFloat(value) * 1000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - Date.now());
}

/** undici hides the useful part (ECONNREFUSED, "other side closed") a few causes deep. */
function rootCause(err: unknown): string {
  let current = err;
  let best = err instanceof Error ? err.message : String(err);
  for (let depth = 0; depth < 5 && current instanceof Error; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string' && /^E[A-Z]+$/.test(code)) return code; // errno codes say it best
    if (current.message) best = current.message;
    current = current.cause;
  }
  return clip(best);
}

function abortReason(signal: AbortSignal): unknown {
  return signal.reason ?? new DOMException('This operation was aborted', 'AbortError');
}
