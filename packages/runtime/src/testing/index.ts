// Test helpers shipped with the runtime (subpath `@infinity-code/runtime/testing`). Nothing here
// may import vitest: this folder compiles with the package.
export { startFakeMessagesApi } from './fake-messages-api.js';
export type {
  FakeBlock,
  FakeBrain,
  FakeCacheCreation,
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
export { checkModelRules, checkPrefill, retiredModelError } from './model-rules.js';
export { checkThinkingBinding, type BindingOutcome, type DropReason, type DroppedBlock } from './thinking-binding.js';
export { readRedactedData, readThinkingSignature, type SignedFacts } from './thinking-signature.js';
export { thinkingMode, type ThinkingMode } from './thinking-mode.js';
export { canonicalJson } from './canonical-json.js';
export {
  API_VERSION_2026_10_21,
  BETA_THINKING_BINDING_CONTROLS,
  BETA_THINKING_DISPLAY_UPDATES,
  type RequestHeaders,
} from './request-headers.js';
export {
  PromptCache,
  DEFAULT_CACHE_TTL_MS,
  DEFAULT_CACHE_TTL_1H_MS,
  DEFAULT_LOOKBACK,
  DEFAULT_MIN_CACHE_TOKENS,
  type CacheOutcome,
  type PromptCacheOptions,
} from './prompt-cache.js';
export { IMAGE_TOKENS, blockTokens, textTokens } from './token-estimate.js';
export { replyTiming, type ReplyTiming } from './pacing.js';
export { sumUsage, type UsageTotal } from './usage-total.js';
