// What a test scripts and what the fake records; the server is in fake-messages-api.ts.
import type { PromptCacheOptions } from './prompt-cache.js';

export interface FakeUsage {
  input_tokens?: number;
  output_tokens?: number;
  cache_creation_input_tokens?: number;
  cache_read_input_tokens?: number;
}

/** One content block of a reply, streamed as the real API streams that block type. */
export type FakeBlock =
  | { type: 'text'; text: string }
  | {
      type: 'tool_use';
      id?: string;
      name: string;
      input: unknown;
      /** Sent verbatim as the input_json_delta pieces instead of JSON of `input` (malformed input tests). */
      rawInputJson?: string;
    };

/** A successful reply. The fault fields may be combined with content (e.g. cut a tool call). */
export interface FakeReply {
  /** The reply's blocks in order; when given, `text`, `toolUse` and `rawInputJson` must not be. */
  content?: FakeBlock[];
  /** Shorthand for a text block (first) ... */
  text?: string;
  /** ... and one tool_use block after it. */
  toolUse?: { id?: string; name: string; input: unknown };
  /** Reported as is; fields left out are simulated (token estimate and prompt cache). */
  usage?: FakeUsage;
  /** How many text_delta pieces each text block is split into (default 2). */
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
  /** The HTTP status answered; unset while the brain is still thinking. */
  status?: number;
  /** The usage reported for a successful reply (all four fields, as sent). */
  usage?: Required<FakeUsage>;
  /** The message of a 400 the fake itself answered (history validation, missing fields). */
  error?: string;
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
  /** Reject histories the real API rejects, with its 400 (default true). */
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
