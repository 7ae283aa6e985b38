import { describe, expect, it } from 'vitest';
import { canonicalJson } from './canonical-json.js';
import { prefixContext, prefixDigest } from './conversation-prefix.js';
import { readRedactedData, readThinkingSignature, signRedacted, signThinking } from './thinking-signature.js';

const decode = (token: string) => JSON.parse(Buffer.from(token, 'base64').toString('utf8')) as Record<string, unknown>;
const encode = (env: Record<string, unknown>) => Buffer.from(JSON.stringify(env)).toString('base64');

describe('canonicalJson', () => {
  it('ignores key order and cache_control at any depth, but no other value', () => {
    const a = { type: 'text', text: 'hi', cache_control: { type: 'ephemeral' }, nested: [{ b: 1, a: 2, cache_control: {} }] };
    const b = { nested: [{ a: 2, b: 1 }], text: 'hi', type: 'text' };
    expect(canonicalJson(a)).toBe(canonicalJson(b));
    expect(canonicalJson({ ...b, text: 'hi ' })).not.toBe(canonicalJson(b));
    expect(canonicalJson({ ...b, nested: [{ a: 2, b: '1' }] })).not.toBe(canonicalJson(b));
  });
});

describe('thinking signatures', () => {
  it('vouch for the model, the prefix and the exact text', () => {
    const sig = signThinking('claude-sonnet-5-5', 'p1', 'plan');
    expect(readThinkingSignature(sig, 'plan')).toMatchObject({ kind: 'thinking', model: 'claude-sonnet-5-5', prefix: 'p1' });
    expect(readThinkingSignature(sig, 'plan.')).toBeUndefined();
    expect(readThinkingSignature('c2ln', 'plan')).toBeUndefined();
    expect(readThinkingSignature(undefined, 'plan')).toBeUndefined();
  });

  it('cannot be re-pointed at another model or conversation, or passed off as redacted data', () => {
    const sig = signThinking('claude-opus-5-5', 'p1', '');
    expect(readThinkingSignature(encode({ ...decode(sig), m: 'claude-sonnet-5-5' }), '')).toBeUndefined();
    expect(readThinkingSignature(encode({ ...decode(sig), p: 'p2' }), '')).toBeUndefined();
    expect(readRedactedData(sig)).toBeUndefined();
    const data = signRedacted('claude-opus-5-5', 'p1', 'payload');
    expect(readRedactedData(data)).toMatchObject({ kind: 'redacted_thinking', model: 'claude-opus-5-5' });
    expect(readRedactedData(encode({ ...decode(data), d: 'other' }))).toBeUndefined();
  });

  it('bind to a prefix in which a string system prompt and its one text block agree', () => {
    const messages = [{ role: 'user', content: 'hi' }];
    const asString = prefixDigest(prefixContext({ system: 'S', messages }, 1), []);
    const asBlock = prefixDigest(prefixContext({ system: [{ type: 'text', text: 'S', cache_control: { type: 'ephemeral' } }], messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }] }, 1), []);
    expect(asBlock).toBe(asString);
    expect(prefixDigest(prefixContext({ system: 'S.', messages }, 1), [])).not.toBe(asString);
    expect(prefixDigest(prefixContext({ system: 'S', messages }, 1), [{ type: 'text', text: 'x' }])).not.toBe(asString);
  });
});
