import { describe, expect, it, vi } from 'vitest';
import { EXIT, UserError } from './exit-codes.js';

describe('UserError', () => {
  it('is recognised when another copy of its module made it (the bundle has two builds)', async () => {
    vi.resetModules();
    const copy = await import('./exit-codes.js');
    expect(copy.UserError).not.toBe(UserError);
    const err: unknown = new copy.UserError('Say what you want done.', EXIT.usage);
    expect(err instanceof UserError).toBe(true);
    expect(err).toMatchObject({ message: 'Say what you want done.', exitCode: EXIT.usage, name: 'UserError' });
    expect(new UserError('x', EXIT.config) instanceof copy.UserError).toBe(true);
  });

  it('is not any error, nor an error merely named like it', () => {
    const named = Object.assign(new Error('x'), { name: 'UserError', exitCode: EXIT.usage });
    expect(named instanceof UserError).toBe(false);
    expect(new Error('x') instanceof UserError).toBe(false);
    const notObjects: unknown[] = [null, 'UserError', 2];
    for (const v of notObjects) expect(v instanceof UserError).toBe(false);
  });
});
