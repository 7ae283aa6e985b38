// Signatures on the fake's thinking blocks (and the opaque `data` of its redacted_thinking blocks).
// The real API binds each block to the model that wrote it and to the conversation before it; the
// fake does the same with an HMAC under a fixed secret, so it can verify a block statelessly, also
// one produced by another fake instance or an earlier test process.
import { createHmac, timingSafeEqual } from 'node:crypto';
import { sha256 } from './canonical-json.js';

/**
 * Not a secret from anyone reading this file: it only has to keep a client from producing a valid
 * signature by accident (a hand-written `signature: 'sig'`, a block edited after the fact).
 */
const SECRET = 'infinity-code fake Messages API: thinking block signatures, v1';

export type SignedKind = 'thinking' | 'redacted_thinking';

/** What a signature vouches for. */
export interface SignedFacts {
  kind: SignedKind;
  /** The model id that wrote the block (the table's id, not an alias). */
  model: string;
  /** prefixDigest() of the conversation the block was written in. */
  prefix: string;
  /** sha256 of the block's thinking text (thinking) or payload (redacted_thinking). */
  content: string;
}

interface Envelope {
  k: SignedKind;
  m: string;
  p: string;
  c: string;
  /** redacted_thinking only: the payload, which travels inside the opaque `data`. */
  d?: string;
  mac: string;
}

/** The `signature` of a thinking block whose text is `thinking`. */
export function signThinking(model: string, prefix: string, thinking: string): string {
  return seal({ kind: 'thinking', model, prefix, content: sha256(thinking) });
}

/** The `data` of a redacted_thinking block carrying `payload`. */
export function signRedacted(model: string, prefix: string, payload: string): string {
  return seal({ kind: 'redacted_thinking', model, prefix, content: sha256(payload) }, payload);
}

/**
 * The facts behind a thinking block's signature, or undefined when it is not one the fake made
 * (malformed, forged) or the text no longer matches it (the block was edited).
 */
export function readThinkingSignature(signature: unknown, thinking: unknown): SignedFacts | undefined {
  if (typeof thinking !== 'string') return undefined;
  const facts = open(signature, 'thinking');
  return facts && facts.content === sha256(thinking) ? facts : undefined;
}

/** The facts behind a redacted_thinking block's `data`, or undefined when it is not the fake's. */
export function readRedactedData(data: unknown): SignedFacts | undefined {
  return open(data, 'redacted_thinking');
}

function seal(facts: SignedFacts, payload?: string): string {
  const env: Envelope = { k: facts.kind, m: facts.model, p: facts.prefix, c: facts.content, ...(payload !== undefined && { d: payload }), mac: '' };
  env.mac = mac(env);
  return Buffer.from(JSON.stringify(env), 'utf8').toString('base64');
}

function open(token: unknown, kind: SignedKind): SignedFacts | undefined {
  if (typeof token !== 'string' || token === '') return undefined;
  let env: Partial<Envelope>;
  try {
    env = JSON.parse(Buffer.from(token, 'base64').toString('utf8')) as Partial<Envelope>;
  } catch {
    return undefined;
  }
  if (typeof env !== 'object' || env === null || env.k !== kind) return undefined;
  const { m, p, c, d, mac: given } = env;
  if (typeof m !== 'string' || typeof p !== 'string' || typeof c !== 'string' || typeof given !== 'string') return undefined;
  if (d !== undefined && typeof d !== 'string') return undefined;
  const expected = Buffer.from(mac({ k: kind, m, p, c, ...(d !== undefined && { d }), mac: '' }), 'hex');
  const actual = Buffer.from(given, 'hex');
  if (actual.length !== expected.length || !timingSafeEqual(actual, expected)) return undefined;
  if (kind === 'redacted_thinking' && d === undefined) return undefined;
  return { kind, model: m, prefix: p, content: c };
}

/** HMAC over every field but the MAC itself, in a fixed order. */
function mac(env: Envelope): string {
  return createHmac('sha256', SECRET)
    .update(JSON.stringify([env.k, env.m, env.p, env.c, env.d ?? null]))
    .digest('hex');
}
