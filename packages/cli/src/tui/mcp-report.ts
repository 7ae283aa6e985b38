import type { McpServerStatus } from '@infinity-code/mcp';

const SOURCES: Record<McpServerStatus['source'], string> = {
  'user-config': 'your config',
  'project-config': "the project's config",
  'mcp-json': '.mcp.json',
  flag: '--mcp-config',
};

/**
 * `/mcp`: each server with its state, what it runs or reaches, where it is defined, its tools
 * (as the model calls them), and why it is not ready when it isn't. Text, for the transcript.
 */
export function mcpReport(servers: readonly McpServerStatus[]): string {
  if (servers.length === 0) {
    return 'No MCP servers. Define them in .mcp.json at the repository root, in "mcpServers" of your config, or with --mcp-config <file>.';
  }
  const lines = [`MCP servers (${servers.length}):`];
  for (const s of servers) {
    const where = s.transport === 'http' ? 'http' : `stdio, in the ${s.runsIn ?? 'sandbox'}`;
    const restarts = s.restarts > 0 ? ` · restarted ${s.restarts}×` : '';
    lines.push(`  ${s.name} · ${s.state}${restarts} · ${where} · from ${SOURCES[s.source]} (${s.file})`);
    lines.push(`    ${s.target}`);
    if (s.message) lines.push(`    ${s.message.split('\n').join('\n    ')}`);
    if (s.tools.length > 0) lines.push(`    tools: ${s.tools.join(', ')}`);
    else if (s.state === 'ready') lines.push('    tools: none');
    for (const t of s.skippedTools) lines.push(`    left out: ${t.name} (${t.reason})`);
    if (s.stderr && (s.state === 'failed' || s.state === 'restarting') && !s.message?.includes(s.stderr)) lines.push(`    stderr:\n      ${s.stderr.split('\n').join('\n      ')}`);
  }
  return lines.join('\n');
}
