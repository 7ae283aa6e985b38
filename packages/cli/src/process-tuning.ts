// Settings of the whole process, which the CLI (a program) makes and its libraries do not.
import { setFlagsFromString } from 'node:v8';

/**
 * Node's fetch parses HTTP responses with llhttp compiled to WebAssembly. Its parse loop runs
 * hot enough that V8 recompiles it, optimised, on a background thread: one huge function, some
 * 150-400 ms of CPU per process, which on a small machine takes a core from the commands and git
 * processes a session waits for. The baseline code reads a model's stream as fast as it comes.
 * A budget no response exhausts turns that recompilation off. It is read when the parser is
 * instantiated (the first connection), and must be set after Node loaded fetch's JavaScript:
 * Node's built-in code cache is valid only for the flags it was made with, and changed flags
 * make Node compile its own modules afresh. So the provider calls this at that moment
 * (AnthropicProviderOptions.beforeFirstConnection).
 */
export function capWasmTierUp(): void {
  setFlagsFromString(`--wasm-tiering-budget=${2 ** 30}`);
}
