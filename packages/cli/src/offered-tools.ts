// The tools the CLI offers every session, as the model sees them: the runtime's own and the
// coding tools. What the build makes input checks for (scripts/bundle.mjs).
import { LocalSystem, MemoryStore, ScriptedProvider, type ToolDefinition } from '@infinity-code/runtime';
import { codingTools } from '@infinity-code/tools';

/** Their definitions, in the order the model sees them. */
export async function offeredTools(): Promise<ToolDefinition[]> {
  const tools = codingTools({ sandboxFor: () => Promise.reject(new Error('no sandbox here')) });
  const system = new LocalSystem({
    store: new MemoryStore(),
    provider: new ScriptedProvider(() => Promise.resolve({ text: '' })),
    tools: tools.tools,
    model: 'none',
  });
  try {
    return [...system.toolDefinitions];
  } finally {
    await system.close();
  }
}
