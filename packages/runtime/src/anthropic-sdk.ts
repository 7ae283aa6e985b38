// The parts of the Anthropic SDK a streamed Messages call needs, in one module that the provider
// imports lazily. Named imports let the bundler keep only these: the package's root module (and a
// dynamic import of any of its modules, which keeps all that module's exports) attaches every API
// resource to its client, three times the code to load before the first model request.
export { BaseAnthropic } from '@anthropic-ai/sdk/client';
export { Messages } from '@anthropic-ai/sdk/resources/messages';
export { APIConnectionError, APIConnectionTimeoutError, APIError } from '@anthropic-ai/sdk/error';
