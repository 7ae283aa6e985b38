// Test helpers shipped with the runtime (subpath `@infinity-code/runtime/testing`). Nothing here
// may import vitest: this folder compiles with the package.
export { startFakeMessagesApi } from './fake-messages-api.js';
export type {
  FakeBlock,
  FakeBrain,
  FakeHttpError,
  FakeLatency,
  FakeMessagesApi,
  FakeMessagesApiOptions,
  FakeReply,
  FakeRequestBody,
  FakeScript,
  FakeUsage,
  RecordedRequest,
} from './fake-types.js';
export { validateMessagesRequest, MAX_CACHE_MARKERS } from './message-validation.js';
export {
  PromptCache,
  DEFAULT_CACHE_TTL_MS,
  DEFAULT_LOOKBACK,
  DEFAULT_MIN_CACHE_TOKENS,
  type CacheOutcome,
  type PromptCacheOptions,
} from './prompt-cache.js';
export { IMAGE_TOKENS, blockTokens, textTokens } from './token-estimate.js';
export { replyTiming, type ReplyTiming } from './pacing.js';
export { sumUsage, type UsageTotal } from './usage-total.js';
