import { execFile } from 'node:child_process';
import type { AsyncTool, Brain, CompletionRequest } from '@infinity-code/runtime';

/**
 * The demo's model decisions (a scripted brain): look at the toolchain with a real asynchronous
 * tool, then summarise. Lets a newcomer see the runtime work with no API key.
 */
export const demoBrain: Brain = (r: CompletionRequest) => {
  const results = r.messages.flatMap((m) => m.content).filter((c) => c.type === 'tool_result');
  if (results.length === 0) {
    return {
      text: "I'll check which Node.js this machine runs, in the background, and continue when it answers.",
      toolCall: { name: 'node_version', input: {} },
    };
  }
  const last = results[results.length - 1]!;
  const version = last.type === 'tool_result' && last.content[0]?.type === 'text' ? last.content[0].text : '?';
  return {
    text:
      `The tool answered: Node.js ${version.trim()}. That was one slice to ask, a commit, an ` +
      'asynchronous dispatch, the result back through the durable queue, and a second slice to answer.',
  };
};

/** A real asynchronous tool: runs `node --version` and answers when the process exits. */
export const nodeVersionTool: AsyncTool = {
  kind: 'async',
  name: 'node_version',
  description: 'Report the version of Node.js on this machine.',
  input_schema: { type: 'object', properties: {} },
  display: () => '$ node --version',
  dispatch(_input, ctx) {
    execFile(process.execPath, ['--version'], (err, stdout) => {
      void ctx.respond(err ? { content: `Error: ${err.message}`, isError: true } : { content: stdout });
    });
  },
};
