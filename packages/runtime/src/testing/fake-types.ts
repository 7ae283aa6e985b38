// What a test scripts and what the fake records; the server is in fake-messages-api.ts.
import type { PromptCacheOptions } from './prompt-cache.js';
import type { DroppedBlock } from './thinking-binding.js';

/** Cache writes by lifetime; together they make cache_creation_input_tokens. */
export interface FakeCacheCreation {
  ephemeral_5m_input_tokens: number;
  ephemeral_1h_input_tokens: number;
}

export interface FakeUsage {
  input_tokens?: number;
  /** Thinking included, whether the display returned its text or not. */
  output_tokens?: number;
  cache_creation_input_tokens?: number;
  cache_read_input_tokens?: number;
  /** Simulated from the markers' ttl; a scripted cache_creation_input_tokens alone counts as 5m. */
  cache_creation?: FakeCacheCreation;
}

/**
 * One content block of a reply, streamed as the real API streams that block type. On the adaptive
 * models (the 5.x table entries) the fake turns text written before a tool call into a thinking
 * block and opens each reply with one: see FakeReply.
 */
export type FakeBlock =
  | { type: 'text'; text: string }
  /** Signed and sent in place; on an adaptive model its text is emptied when the display hides reasoning (omitted, updates). */
  | { type: 'thinking'; thinking: string }
  /** Sent in place with signed opaque `data` (carrying `data` given here, or a made-up payload). */
  | { type: 'redacted_thinking'; data?: string }
  | {
      type: 'tool_use';
      id?: string;
      name: string;
      input: unknown;
      /** Sent verbatim as the input_json_delta pieces instead of JSON of `input` (malformed input tests). */
      rawInputJson?: string;
    };

/**
 * A successful reply. The fault fields may be combined with content (e.g. cut a tool call).
 *
 * What the client receives depends on the request's model and thinking settings, as with the
 * real API: on an adaptive model (thinking on by default) every reply opens with a signed
 * thinking block, and text scripted before a tool_use comes back as a thinking block (its text
 * empty under the default display, omitted). Under between_tools there is no opening block.
 * Unknown ids and models without thinking get the blocks exactly as scripted.
 */
export interface FakeReply {
  /** The reply's blocks in order; when given, `text`, `toolUse` and `rawInputJson` must not be. */
  content?: FakeBlock[];
  /** Shorthand for a text block (first) ... */
  text?: string;
  /** ... and one tool_use block after it. */
  toolUse?: { id?: string; name: string; input: unknown };
  /**
   * The model's own reasoning, in the thinking block an adaptive reply opens with: returned as
   * text only under display summarized, counted as output tokens always. Ignored without thinking.
   */
  thinking?: string;
  /** Reported as is; fields left out are simulated (token estimate and prompt cache). */
  usage?: FakeUsage;
  /** How many text_delta / thinking_delta pieces each block is split into (default 2). */
  chunks?: number;
  /**
   * end_turn / tool_use by default (tool_use when the reply has a tool call). Any other value is
   * sent as is: pause_turn (the client may send the reply back as the last message to continue),
   * refusal (with stopDetails), model_context_window_exceeded, stop_sequence (with stopSequence).
   * max_tokens is set by the fake itself when the output is cut (max_tokens, cutAtOutputTokens).
   */
  stopReason?: string;
  /** With stopReason refusal: sent as stop_details `{type: 'refusal', category, explanation}`. */
  stopDetails?: { category: string | null; explanation?: string | null };
  /** With stopReason stop_sequence: the sequence that fired. */
  stopSequence?: string;
  /**
   * Cut the reply after this many output tokens (thinking, text and tool JSON, by the fake's
   * estimate), as if max_tokens were that low: stop_reason max_tokens.
   */
  cutAtOutputTokens?: number;
  /** Sent verbatim as the tool's input_json_delta pieces, instead of JSON of toolUse.input. */
  rawInputJson?: string;
  /** Send this many SSE frames (message_start counts as one), then destroy the socket. */
  cutAfterChunks?: number;
  /** Send response headers and `stallAfterChunks` frames (default 0), then nothing for this long. */
  stallMs?: number;
  stallAfterChunks?: number;
  /** Send an SSE `ping` every this many ms from the headers until the reply ends, as the API keeps a quiet stream alive. */
  pingEveryMs?: number;
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
  /** The HTTP status answered; unset while the brain is still thinking. */
  status?: number;
  /** The usage reported for a successful reply (all four fields, as sent). */
  usage?: Required<FakeUsage>;
  /** The message of an error the fake itself answered (400 validation, 404 retired model). */
  error?: string;
  /**
   * Thinking blocks the binding checks left out of the prompt (another model's, or from a different
   * conversation under drop_block). Set, possibly empty, on every request the fake validated and
   * accepted; unset with `strict: false` and on refused requests.
   */
  dropped?: DroppedBlock[];
  /** With the `latency` option: when the first and the last byte of the reply were due, in ms. */
  delay?: { firstByteMs: number; lastByteMs: number };
}

export type FakeBrain = (body: FakeRequestBody, requestIndex: number) => FakeScript | Promise<FakeScript>;

/** How long the service takes: prompt processing before the first byte, then output at a rate. */
export interface FakeLatency {
  baseMs: number;
  /** Per input token not read from cache (uncached input and cache writes). */
  msPerUncachedToken: number;
  outputTokensPerSecond: number;
}

/** `lookback`, `minCacheTokens` and `ttlMs` tune the prompt cache simulation. */
export interface FakeMessagesApiOptions extends PromptCacheOptions {
  brain: FakeBrain;
  /**
   * Refuse what the real API refuses (default true): malformed histories, and for ids in the model
   * table retired models (404), parameters the model rejects, prefill, thinking blocks that fail
   * their signature or prefix check, and (fake-only) assistant turns that differ from the reply sent.
   */
  strict?: boolean;
  /** Simulate prompt caching in the reported usage (default true); off, every input token is uncached. */
  cache?: boolean;
  /** Off by default: replies are sent as fast as possible. */
  latency?: FakeLatency;
  /** The cache's clock (default Date.now), so tests can expire entries without waiting. */
  now?: () => number;
}

export interface FakeMessagesApi {
  /** Base URL for the SDK (`baseURL` / ANTHROPIC_BASE_URL); the SDK appends /v1/messages. */
  readonly url: string;
  readonly requests: RecordedRequest[];
  close(): Promise<void>;
}
