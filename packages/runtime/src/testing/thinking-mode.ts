// What thinking a reply carries, from the model's table entry and the request's `thinking` field.
// Replies are shaped from it in reply-content.ts; whether the request is allowed at all is
// model-rules.ts's business, so a request that got this far is taken at its word.
import { modelInfo } from '../models.js';
import { BETA_THINKING_DISPLAY_UPDATES, hasBeta, type RequestHeaders } from './request-headers.js';
import { isRecord } from './token-estimate.js';

export type ThinkingMode =
  /** Unknown ids, models without thinking, thinking disabled: replies as scripted (2025 shape). */
  | { kind: 'none' }
  /**
   * Every reply opens with a thinking block and text written before a tool call comes back as a
   * thinking block. `showReasoning`: the model's own reasoning is returned as text (summarized);
   * `showNotes`: the notes between tool calls are (summarized, or updates with its beta).
   */
  | { kind: 'adaptive'; showReasoning: boolean; showNotes: boolean }
  /** Sonnet 5.5's lowest setting with tools: no opening block, notes before tool calls as thinking with text. */
  | { kind: 'between_tools' };

export function thinkingMode(body: Record<string, unknown>, headers: RequestHeaders): ThinkingMode {
  const info = typeof body.model === 'string' ? modelInfo(body.model) : undefined;
  if (info?.thinking !== 'adaptive') return { kind: 'none' };
  const thinking = isRecord(body.thinking) ? body.thinking : {};
  if (thinking.type === 'disabled') return { kind: 'none' };
  if (thinking.type === 'between_tools') {
    // Without tools there is nothing to write between: the reply is plain text.
    return Array.isArray(body.tools) && body.tools.length > 0 ? { kind: 'between_tools' } : { kind: 'none' };
  }
  // The 5.x models default to omitted: the blocks arrive, their text empty.
  const display = thinking.display ?? 'omitted';
  const updates = display === 'updates' && hasBeta(headers, BETA_THINKING_DISPLAY_UPDATES);
  return { kind: 'adaptive', showReasoning: display === 'summarized', showNotes: display === 'summarized' || updates };
}
