// Test helpers shipped with the runtime (subpath `@infinity-code/runtime/testing`). Nothing here
// may import vitest: this folder compiles with the package.
export {
  startFakeMessagesApi,
  type FakeBrain,
  type FakeHttpError,
  type FakeMessagesApi,
  type FakeReply,
  type FakeRequestBody,
  type FakeScript,
  type FakeUsage,
  type RecordedRequest,
} from './fake-messages-api.js';
