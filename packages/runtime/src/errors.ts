export type ModelErrorKind =
  | 'rate_limit'
  | 'overloaded'
  | 'server'
  | 'network'
  /**
   * The API could not be reached at all, and never was by this provider: the connection was
   * refused, the host name does not resolve, the TLS handshake failed. Most likely the address
   * (ANTHROPIC_BASE_URL) is wrong, which no amount of waiting fixes, so it gets a few quick
   * retries only (RetryPolicy.unreachableRetries), not the long budget of transient errors.
   */
  | 'unreachable'
  | 'timeout'
  | 'stream_cut'
  | 'auth'
  | 'invalid_request'
  | 'other';

const RETRYABLE: ReadonlySet<ModelErrorKind> = new Set([
  'rate_limit',
  'overloaded',
  'server',
  'network',
  'timeout',
  'stream_cut',
]);

/**
 * Marks a ModelError. A provider can come from another copy of this package than the runtime
 * that calls it (the CLI's demo hands its scripted provider to the headless run, a build of its
 * own: packages/cli/scripts/bundle.mjs), so `instanceof` checks this mark rather than the class.
 */
const MODEL_ERROR = Symbol.for('infinity-code.ModelError');

/** A model provider failure, classified so the slice knows whether to retry. */
export class ModelError extends Error {
  readonly [MODEL_ERROR] = true;
  readonly kind: ModelErrorKind;
  readonly retryable: boolean;
  readonly status: number | undefined;
  readonly retryAfterMs: number | undefined;

  constructor(
    kind: ModelErrorKind,
    message: string,
    opts: { status?: number; retryAfterMs?: number; cause?: unknown } = {},
  ) {
    super(message, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.name = 'ModelError';
    this.kind = kind;
    this.retryable = RETRYABLE.has(kind);
    this.status = opts.status;
    this.retryAfterMs = opts.retryAfterMs;
  }

  static override [Symbol.hasInstance](value: unknown): boolean {
    return typeof value === 'object' && value !== null && (value as { [MODEL_ERROR]?: unknown })[MODEL_ERROR] === true;
  }
}

/** A tool's input did not match its schema, or the tool rejected it. Shown to the model. */
export class ToolInputError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ToolInputError';
  }
}

/**
 * The system closed while a slice waited inside a synchronous call (a report under review): the
 * slice is abandoned as if the process had stopped there, and the next start re-runs the call.
 */
export class SystemClosingError extends Error {
  constructor() {
    super('The agent system closed while this call was running; it runs again on the next start.');
    this.name = 'SystemClosingError';
  }
}

export class StoreError extends Error {
  constructor(message: string, opts: { cause?: unknown } = {}) {
    super(message, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.name = 'StoreError';
  }
}
