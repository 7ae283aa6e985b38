import { describe, expect, it } from 'vitest';
import { scrubGitConfig } from './git-config-scrub.js';

describe('scrubGitConfig', () => {
  it('takes the user part out of every URL, in values and section names, and drops authorization headers', () => {
    const config = [
      '[core]',
      '\trepositoryformatversion = 0',
      '[remote "origin"]',
      '\turl = https://x-access-token:ghp_abcdefghijklmnopqrstuvwxyz0123456789@github.com/o/r.git',
      '\tpushurl = https://ghp_abcdefghijklmnopqrstuvwxyz0123456789@github.com/o/r.git',
      '\tfetch = +refs/heads/*:refs/remotes/origin/*',
      '[remote "mirror"]',
      '\turl = git@github.com:o/r.git',
      '[url "https://oauth2:glpat-secret@gitlab.example.com/"]',
      '\tinsteadOf = https://gitlab.example.com/',
      '[http "https://github.com/"]',
      '\textraheader = AUTHORIZATION: basic eC1hY2Nlc3MtdG9rZW46Z2hwXw==',
      '',
    ].join('\n');
    const out = scrubGitConfig(config);
    expect(out).not.toMatch(/ghp_|glpat-|AUTHORIZATION|x-access-token|oauth2/);
    expect(out).toContain('\turl = https://github.com/o/r.git');
    expect(out).toContain('[url "https://gitlab.example.com/"]');
    // An scp-style address names a user, not a secret: kept.
    expect(out).toContain('\turl = git@github.com:o/r.git');
    expect(out).toContain('\tfetch = +refs/heads/*:refs/remotes/origin/*');
  });

  it('gives a config without credentials back unchanged', () => {
    const config = '[core]\n\tbare = false\n[remote "origin"]\n\turl = https://github.com/o/r.git\n';
    expect(scrubGitConfig(config)).toBe(config);
  });
});
