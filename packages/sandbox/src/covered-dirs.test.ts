import { lstatSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { coveredDirs } from './covered-dirs.js';

// Covered where the machine has it as a directory (a container may lack it).
const RUN = lstatSync('/run', { throwIfNoEntry: false })?.isDirectory() === true;

describe('coveredDirs', () => {
  const made: string[] = [];
  const home = (...dirs: string[]): string => {
    const h = mkdtempSync(path.join(tmpdir(), 'ic-cover-'));
    made.push(h);
    for (const d of dirs) mkdirSync(path.join(h, d), { recursive: true });
    return h;
  };
  afterEach(() => {
    for (const d of made.splice(0)) rmSync(d, { recursive: true, force: true });
  });

  it('covers the home and the socket directories; shows again the toolchains there and what the user lets commands read, never a credential directory', () => {
    const h = home('.nvm', '.cargo/bin', '.ssh', '.aws', 'notes');
    const c = coveredDirs({ home: h, readable: [path.join(h, 'notes'), '/usr/share'], inside: ['/nowhere/state'] });
    expect(c.dirs[0]).toBe(h);
    expect(c.dirs.includes('/run')).toBe(RUN);
    expect(c.keep).toEqual(expect.arrayContaining([path.join(h, '.nvm'), path.join(h, '.cargo/bin'), path.join(h, 'notes')]));
    expect(c.keep).not.toContain(path.join(h, '.ssh'));
    expect(c.keep).not.toContain(path.join(h, '.aws'));
    // Already shown (not under a covered directory): nothing to mount again.
    expect(c.keep).not.toContain('/usr/share');
    // Only what exists is mounted again.
    expect(c.keep).not.toContain(path.join(h, '.pyenv'));
  });

  it('shows again a readable path under /tmp (private to each sandbox), never /tmp itself', () => {
    const added = mkdtempSync('/tmp/ic-cover-added-');
    made.push(added);
    const c = coveredDirs({ home: undefined, readable: [added, '/tmp', '/tmp/ic-cover-missing-dir'], inside: [] });
    expect(c.keep).toContain(added);
    expect(c.keep).not.toContain('/tmp');
    expect(c.keep).not.toContain('/tmp/ic-cover-missing-dir');
  });

  it('leaves a home at / or inside the state dir as it is, and the socket directories covered', () => {
    const state = home('home');
    expect(coveredDirs({ home: '/', readable: [], inside: [] }).dirs).not.toContain('/');
    const inState = coveredDirs({ home: path.join(state, 'home'), readable: [], inside: [state] });
    expect(inState.dirs).not.toContain(path.join(state, 'home'));
    expect(inState.dirs.includes('/run')).toBe(RUN);
    expect(coveredDirs({ home: undefined, readable: [], inside: [] }).dirs.includes('/run')).toBe(RUN);
  });
});
