// Everything the fake refuses before asking the brain, in the order a developer should meet it:
// a retired model (404) before anything about the request; then the shape of the history; the
// parameters the model rejects; prefill; the thinking blocks' own checks (the real API's); and
// last the fake-only echo check, which catches what the real API would let pass silently.
import { modelInfo } from '../models.js';
import { validateMessagesRequest } from './message-validation.js';
import { checkModelRules, checkPrefill, retiredModelError } from './model-rules.js';
import type { ReplyMemory } from './reply-memory.js';
import type { RequestHeaders } from './request-headers.js';
import { checkThinkingBinding, type DroppedBlock } from './thinking-binding.js';

export type RequestVerdict =
  | { ok: true; dropped: DroppedBlock[] }
  | { ok: false; status: 400 | 404; type: 'invalid_request_error' | 'not_found_error'; message: string };

export function checkRequest(body: Record<string, unknown>, headers: RequestHeaders, memory: ReplyMemory): RequestVerdict {
  const model = typeof body.model === 'string' ? body.model : '';
  const retired = retiredModelError(model);
  if (retired) return { ok: false, status: 404, type: 'not_found_error', message: retired };
  const invalid =
    validateMessagesRequest(body) ??
    checkModelRules(body, headers) ??
    checkPrefill(body, (m) => memory.isContinuation(m));
  if (invalid) return refuse(invalid);
  const binding = checkThinkingBinding(body);
  if ('error' in binding) return refuse(binding.error);
  // Ids outside the table are served as in 2025, when assistant turns could be edited freely.
  const echo = modelInfo(model) && Array.isArray(body.messages) ? memory.checkEchoes(body) : undefined;
  if (echo) return refuse(echo);
  return { ok: true, dropped: binding.dropped };
}

function refuse(message: string): RequestVerdict {
  return { ok: false, status: 400, type: 'invalid_request_error', message };
}
