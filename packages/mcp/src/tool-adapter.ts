// A server's tool as a runtime tool: asynchronous (dispatch only starts the call; the answer comes
// back as an input), cancellable, bounded in time, its text cut like command output.
import type { AsyncTool, ImageMediaType, JsonSchema, ResultContent, ToolOutput } from '@infinity-code/runtime';
import { clipOutput, type OutputLimits } from '@infinity-code/tools';
import type { CallToolResult, Tool as McpTool } from '@modelcontextprotocol/sdk/types.js';
import { McpCallError, type McpServer } from './server.js';

export interface AdapterOptions {
  timeoutMs: number;
  /** Said after a timeout: where the limit is set. */
  timeoutHelp?: string;
  limits: OutputLimits;
}

/** The Messages API's limit for one image (base64 of 5 MB). */
const MAX_IMAGE_BASE64 = Math.ceil((5 * 1024 * 1024 * 4) / 3);
const IMAGE_TYPES: ReadonlySet<string> = new Set(['image/png', 'image/jpeg', 'image/gif', 'image/webp']);
const MAX_DESCRIPTION = 2000;

/**
 * `mcp__<server>__<tool>` with the server's input schema. Calls in flight live in `running`
 * only while they run: an idle session holds nothing here.
 */
export function mcpTool(server: McpServer, tool: McpTool, modelName: string, opts: AdapterOptions): AsyncTool {
  const running = new Map<string, AbortController>();
  const key = (threadId: string, callId: string) => `${threadId}\u0000${callId}`;
  const description = (tool.description ?? tool.title ?? tool.annotations?.title ?? '').trim();
  return {
    kind: 'async',
    name: modelName,
    description: clip(`${description || `The ${tool.name} tool.`} (MCP server "${server.name}", tool "${tool.name}".)`),
    input_schema: inputSchema(tool.inputSchema),
    display: (input) => `${server.name} › ${tool.name} ${short(JSON.stringify(input))}`,
    dispatch(input, ctx) {
      const abort = new AbortController();
      const k = key(ctx.threadId, ctx.call.id);
      running.set(k, abort);
      const work = async (): Promise<ToolOutput> => {
        try {
          const result = await server.call(tool.name, input, {
            signal: abort.signal,
            timeoutMs: opts.timeoutMs,
            onProgress: (text) => ctx.progress(text),
          });
          return toOutput(result, opts.limits);
        } catch (err) {
          if (err instanceof McpCallError) {
            const help = err.failure === 'timeout' && opts.timeoutHelp ? ` ${opts.timeoutHelp}` : '';
            return { content: `Error: ${err.message}${help}`, isError: true };
          }
          return { content: `Error: the MCP tool call failed: ${err instanceof Error ? err.message : String(err)}`, isError: true };
        } finally {
          running.delete(k);
        }
      };
      void work().then((output) =>
        // A cancelled call was closed by the runtime already; it drops this answer but expects one.
        ctx.respond(output).catch((err: unknown) => {
          process.emitWarning(`${modelName}: could not deliver the result: ${(err as Error).message}`);
        }),
      );
    },
    cancel(ctx) {
      // The SDK tells the server (notifications/cancelled) and the call answers "cancelled".
      running.get(key(ctx.threadId, ctx.call.id))?.abort();
    },
  };
}

/**
 * The server's schema as the runtime validates it and the model is sent it: an object schema
 * (the MCP spec requires one), without `$schema`, which names drafts the validator may not know.
 */
function inputSchema(schema: McpTool['inputSchema']): JsonSchema {
  const { $schema: _ignored, ...rest } = schema;
  return { ...rest, type: 'object' };
}

/** The call's result as tool result content: text cut like command output, images as images. */
export function toOutput(result: CallToolResult, limits: OutputLimits): ToolOutput {
  const content: ResultContent[] = [];
  const texts: string[] = [];
  const flush = () => {
    if (texts.length === 0) return;
    content.push({ type: 'text', text: clipOutput(texts.join('\n'), limits) });
    texts.length = 0;
  };
  for (const block of result.content ?? []) {
    switch (block.type) {
      case 'text':
        texts.push(block.text);
        break;
      case 'image':
        if (IMAGE_TYPES.has(block.mimeType) && block.data.length <= MAX_IMAGE_BASE64) {
          flush();
          content.push({ type: 'image', source: { type: 'base64', media_type: block.mimeType as ImageMediaType, data: block.data } });
        } else {
          texts.push(`[an image (${block.mimeType}, ${block.data.length} base64 characters) that can't be shown: images must be PNG, JPEG, GIF or WebP of at most 5 MB]`);
        }
        break;
      case 'audio':
        texts.push(`[audio (${block.mimeType}) left out: audio can't be shown]`);
        break;
      case 'resource': {
        const r = block.resource;
        if ('text' in r && typeof r.text === 'string') texts.push(`[resource ${r.uri}]\n${r.text}`);
        else texts.push(`[binary resource ${r.uri}${r.mimeType ? ` (${r.mimeType})` : ''} left out]`);
        break;
      }
      case 'resource_link':
        texts.push(`[resource link: ${block.name} ${block.uri}${block.description ? ` — ${block.description}` : ''}]`);
        break;
      default:
        texts.push(`[content of type ${(block as { type: string }).type} left out]`);
    }
  }
  // Structured output without text (the spec asks servers to send both; not all do).
  if (content.length === 0 && texts.length === 0 && result.structuredContent !== undefined) {
    texts.push(JSON.stringify(result.structuredContent, null, 2));
  }
  flush();
  if (content.length === 0) content.push({ type: 'text', text: result.isError ? '(the tool failed without saying why)' : '(no output)' });
  return { content, ...(result.isError ? { isError: true } : {}) };
}

function clip(text: string): string {
  return text.length <= MAX_DESCRIPTION ? text : `${text.slice(0, MAX_DESCRIPTION - 1)}…`;
}

function short(text: string, max = 80): string {
  const line = text.replace(/\s+/g, ' ');
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}
