// Settings of the whole process, which the CLI (a program) makes and its libraries do not: each
// for one moment of its start-up, and nowhere else.
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

/**
 * Runs `load` (the import of the terminal UI) with the process set up for it, as it was before
 * once it settled:
 * - React and its reconciler choose their production builds by NODE_ENV when first loaded: those
 *   load and render faster. Set only for the import, so commands the agent runs never inherit it.
 * - Ink's layout engine (yoga-layout) instantiates its WebAssembly while it loads, from a data:
 *   URL through fetch() when fetch exists; the first fetch() loads Node's HTTP client (undici),
 *   some 100 ms before the first frame. Without fetch it decodes the same bytes itself, so fetch
 *   is hidden for the import only (nothing else runs then); the SDK loads undici later, off the
 *   first frame's path.
 */
export async function whileUiLoads<T>(load: () => Promise<T>): Promise<T> {
  const had = Object.prototype.hasOwnProperty.call(process.env, 'NODE_ENV');
  const previous = process.env.NODE_ENV;
  if (!had) process.env.NODE_ENV = 'production';
  const fetchProperty = Object.getOwnPropertyDescriptor(globalThis, 'fetch');
  const hideFetch = fetchProperty?.configurable === true;
  if (hideFetch) Object.defineProperty(globalThis, 'fetch', { value: undefined, writable: true, configurable: true });
  try {
    return await load();
  } finally {
    if (hideFetch) Object.defineProperty(globalThis, 'fetch', fetchProperty);
    if (!had) delete process.env.NODE_ENV;
    else process.env.NODE_ENV = previous;
  }
}
