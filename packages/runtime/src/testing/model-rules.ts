// The request parameters a model in the table refuses with 400 invalid_request_error, worded as
// the December 2026 API words them where that wording is published. Ids outside the table pass:
// a model newer than the table must not be refused for what the table cannot know.
import { modelInfo, type ModelInfo } from '../models.js';
import { API_VERSION_2026_10_21, BETA_THINKING_DISPLAY_UPDATES, apiVersion, hasBeta, type RequestHeaders } from './request-headers.js';
import { isRecord } from './token-estimate.js';

type Body = Record<string, unknown>;

/** The 404 message for a retired id (the real API names the model as sent), else undefined. */
export function retiredModelError(model: string): string | undefined {
  return modelInfo(model)?.status.kind === 'retired' ? `model: ${model}` : undefined;
}

/** The first parameter the model refuses, or undefined. Assistant prefill is checkPrefill's. */
export function checkModelRules(body: Body, headers: RequestHeaders): string | undefined {
  const info = typeof body.model === 'string' ? modelInfo(body.model) : undefined;
  if (!info) return undefined;
  return (
    checkMaxTokens(body, info) ??
    checkThinking(body, headers, info) ??
    checkEffort(body, info) ??
    checkSampling(body, headers, info) ??
    checkToolChoice(body, info)
  );
}

/**
 * A request ending in an assistant message is a prefill, which current models refuse; the one
 * exception is sending back a reply that stopped with pause_turn, which `isContinuation` knows.
 */
export function checkPrefill(body: Body, isContinuation: (message: unknown) => boolean): string | undefined {
  if (typeof body.model !== 'string' || !modelInfo(body.model) || !Array.isArray(body.messages)) return undefined;
  const last: unknown = body.messages.at(-1);
  if (!isRecord(last) || last.role !== 'assistant' || isContinuation(last)) return undefined;
  return (
    `messages.${body.messages.length - 1}: This model does not support assistant message prefill. ` +
    'The conversation must end with a user message.'
  );
}

function checkMaxTokens(body: Body, info: ModelInfo): string | undefined {
  const n = body.max_tokens;
  if (typeof n !== 'number' || n <= info.maxOutput) return undefined;
  return `max_tokens: ${n} > ${info.maxOutput}, which is the maximum allowed number of output tokens for ${info.id}`;
}

function checkThinking(body: Body, headers: RequestHeaders, info: ModelInfo): string | undefined {
  if (body.thinking === undefined) return undefined;
  if (!isRecord(body.thinking)) return 'thinking: Input should be an object';
  const { type, ...rest } = body.thinking;
  if (typeof type !== 'string') return 'thinking.type: Field required';
  if (!(info.thinkingTypes as readonly string[]).includes(type)) return unsupportedType(type, info);
  if (type === 'between_tools') return checkBetweenTools(rest, effortOf(body) ?? info.defaultEffort);
  if ('budget_tokens' in rest && info.thinking === 'adaptive') {
    return `thinking.budget_tokens: Extra inputs are not permitted. ${USE_ADAPTIVE}`;
  }
  return checkDisplay(rest.display, headers);
}

const USE_ADAPTIVE = 'Use "thinking.type.adaptive" and "output_config.effort" to control thinking behavior.';

function unsupportedType(type: string, info: ModelInfo): string {
  // Opus 5.5's published wording; the older models point at budgeted thinking instead.
  const advice = info.thinkingTypes.includes('adaptive')
    ? USE_ADAPTIVE
    : 'Use "thinking.type.enabled" with "thinking.budget_tokens" to control thinking behavior.';
  return `"thinking.type.${type}" is not supported for this model. ${advice}`;
}

/** between_tools is the lowest setting: no other thinking field, and not at the two top efforts. */
function checkBetweenTools(rest: Body, effort: unknown): string | undefined {
  const extra = Object.keys(rest)[0];
  if (extra !== undefined) return `thinking.between_tools.${extra}: Extra inputs are not permitted`;
  if (effort === 'xhigh' || effort === 'max') {
    return `"thinking.type.between_tools" cannot be used with "output_config.effort" "${String(effort)}". Use effort "low", "medium" or "high", or "thinking.type.adaptive".`;
  }
  return undefined;
}

function checkDisplay(display: unknown, headers: RequestHeaders): string | undefined {
  if (display === undefined || display === null || display === 'summarized' || display === 'omitted') return undefined;
  if (display === 'updates') {
    return hasBeta(headers, BETA_THINKING_DISPLAY_UPDATES)
      ? undefined
      : `thinking.display: "updates" requires the beta header "anthropic-beta: ${BETA_THINKING_DISPLAY_UPDATES}"`;
  }
  return "thinking.display: Input should be 'summarized' or 'omitted'";
}

function effortOf(body: Body): unknown {
  return isRecord(body.output_config) ? body.output_config.effort : undefined;
}

function checkEffort(body: Body, info: ModelInfo): string | undefined {
  const effort = effortOf(body);
  if (effort === undefined) return undefined;
  if (info.efforts.length === 0) return `output_config.effort: Extra inputs are not permitted; ${info.id} does not support effort`;
  if ((info.efforts as readonly unknown[]).includes(effort)) return undefined;
  return `output_config.effort: Input should be ${info.efforts.map((e) => `'${e}'`).join(', ')}`;
}

/** What the 5.x models still accept under older API versions; top_k has no default value to send. */
const SAMPLING_DEFAULTS: Readonly<Record<string, number | undefined>> = { temperature: 1, top_p: 1, top_k: undefined };

function checkSampling(body: Body, headers: RequestHeaders, info: ModelInfo): string | undefined {
  for (const [key, fallback] of Object.entries(SAMPLING_DEFAULTS)) {
    const value = body[key];
    if (value === undefined) continue;
    // The 2026-10-21 API version removed the fields altogether, for every model.
    if (apiVersion(headers) === API_VERSION_2026_10_21) return `${key}: Extra inputs are not permitted`;
    if (info.thinking === 'adaptive' && value !== fallback) {
      return fallback === undefined
        ? `${key}: this model does not support ${key}`
        : `${key}: this model only supports the default value ${fallback}`;
    }
  }
  return undefined;
}

function checkToolChoice(body: Body, info: ModelInfo): string | undefined {
  const choice = body.tool_choice;
  if (info.forcedToolChoice || !isRecord(choice) || (choice.type !== 'any' && choice.type !== 'tool')) return undefined;
  return `tool_choice: "${choice.type}" is not supported for this model. Use "auto" or "none", and say in the prompt when a tool must be used.`;
}
