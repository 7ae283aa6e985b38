// Public face of @infinity-code/runtime: the time-sliced agent runtime (no files, git or UI).
export type {
  ContentBlock,
  HistoryMessage,
  ImageBlock,
  ImageMediaType,
  RedactedThinkingBlock,
  ReplyBlock,
  ResultContent,
  TextBlock,
  ThinkingBlock,
  ToolResultBlock,
  ToolUseBlock,
  Usage,
} from './messages.js';
export { addUsage, isThinking, resultText, text, ZERO_USAGE } from './messages.js';
export type { InputBody, InputMessage, ToolResultInput, UserTextInput } from './input.js';
export { toolResult, userText } from './input.js';
export { ModelError, StoreError, ToolInputError, type ModelErrorKind } from './errors.js';
export { mark as timingMark, timed } from './timing.js';
export type { CompletionRequest, ModelProvider, StopDetails, StreamEvent, StreamWatch, ThinkingDisplay } from './provider.js';
export {
  DEFAULT_MODEL,
  EFFORTS,
  effortsOf,
  isEffort,
  maxTokensFor,
  modelInfo,
  MODELS,
  priceFor,
  resolveModelId,
  retirement,
  type Effort,
  type ModelInfo,
  type ModelPrice,
  type ModelStatus,
} from './models.js';
export type {
  AsyncTool,
  AsyncToolContext,
  CancelOptions,
  JsonSchema,
  SyncTool,
  Tool,
  ToolCall,
  ToolContext,
  ToolDefinition,
  ToolDisplay,
  ToolEvent,
  ToolOutput,
} from './tool.js';
export { EventBus, type Observer, type RuntimeEvent, type RuntimeEventType, type SliceOutcome } from './events.js';
export type {
  CompletionUsage,
  ConversationStore,
  InputQueue,
  LoadedThread,
  PendingCall,
  RootFilter,
  RuntimeStore,
  SliceCommit,
  StateStore,
  Subscription,
  ThreadKind,
  ThreadRecord,
  ThreadStatus,
  ThreadUsage,
  UsageStore,
} from './store.js';
export { UNRECORDED_MODEL } from './store.js';
export { MemoryStore } from './memory-store.js';
export { SqliteStore, type SqliteStoreOptions } from './sqlite-store.js';
export { DEFAULT_RETRY, type RetryPolicy } from './completion.js';
export { INJECTED_TOOL_NAME, INTERRUPTED_BY_RESTART, INTERRUPTED_BY_USER, MOVED_TO_BACKGROUND, WOKEN_BY_INPUT, type InjectedReport } from './wording.js';
export { readHistory, type HistoryEntry } from './history-reading.js';
export { buildSystemPrompt, DEFAULT_BASE_PROMPT } from './system-prompt.js';
export { stackLine, threadStackOf } from './thread-identity.js';
export { newThreadId } from './ids.js';
export type { SystemOptions, ToolPermit } from './system-options.js';
export type { InputCheck } from './tool-registry.js';
export { OWN_TOOL_CHECKS, schemaHash, toolChecksModule, type CheckMadeAhead, type ToolChecks } from './tool-checks.js';
export { defineTool, type InputOf, type ToolSchema, type TypedAsyncTool, type TypedSyncTool } from './define-tool.js';
export { DEFAULT_LIMITS } from './system-options.js';
export type { Limits, ReportReviewer } from './services.js';
export { LocalSystem, type LocalSystemOptions } from './local-system.js';
export type { Quiescence, QuiescenceOptions } from './quiescence.js';
export { StepSystem, type StepSystemOptions } from './step-system.js';
export { ScriptedProvider, type Brain, type ScriptedCall, type ScriptedReply } from './scripted-provider.js';
export { AnthropicProvider, type AnthropicProviderOptions } from './anthropic-provider.js';
export { REPORTING_TOOLS } from './builtin-tools.js';
