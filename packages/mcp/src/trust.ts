// Whether a server may start. A repository's own files (.mcp.json, .infinity/config.json) come with
// a clone, and a stdio server runs a command on the user's machine: those need the user's yes,
// remembered in the user's own config; servers the user defined or named (--mcp-config) don't.
import { fingerprint, type McpServerEntry } from './config.js';

/** The user's answer for one project server, as remembered in the user config. */
export interface McpTrustDecision {
  allow: boolean;
  /** The definition answered for (see fingerprint()); absent: whatever the name defines. */
  fingerprint?: string;
}

/**
 * - `trusted`: the user defined it or named its file; starts.
 * - `approved`: a project server the user allowed (this definition); starts.
 * - `declined`: a project server the user said no to (this definition); doesn't start.
 * - `unknown`: a project server nobody decided on yet: the TUI asks, headless runs skip it.
 */
export type McpTrust = 'trusted' | 'approved' | 'declined' | 'unknown';

export function isProjectSource(entry: Pick<McpServerEntry, 'source'>): boolean {
  return entry.source === 'mcp-json' || entry.source === 'project-config';
}

export function trustOf(entry: McpServerEntry, decisions: Readonly<Record<string, McpTrustDecision>> | undefined): McpTrust {
  if (!isProjectSource(entry)) return 'trusted';
  const decision = decisions?.[entry.name];
  if (!decision) return 'unknown';
  // An answer given for another definition (the file changed since) is asked again.
  if (decision.fingerprint !== undefined && decision.fingerprint !== fingerprint(entry.config)) return 'unknown';
  return decision.allow ? 'approved' : 'declined';
}
