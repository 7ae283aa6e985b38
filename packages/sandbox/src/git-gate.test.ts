// One gate for every git over sandbox content (trusted-git.ts): a new call site that hands git a
// git dir of its own, or runs a sandbox's raw git runner, fails here before it can run a planted
// fsmonitor or hook. The user's own repository (snapshots, applying to their tree) is the one
// other place a git dir is named, always with USER_REPO_SWITCHES or the base's own script.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const SRC = path.dirname(fileURLToPath(import.meta.url));
const sources = readdirSync(SRC)
  .filter((f) => f.endsWith('.ts') && !f.endsWith('.test.ts'))
  .map((f) => ({ file: f, lines: readFileSync(path.join(SRC, f), 'utf8').split('\n') }));

const isComment = (line: string) => /^\s*(\/\*\*|\*|\/\/)/.test(line);

function offending(match: RegExp, allowed: (line: string, file: string) => boolean): string[] {
  return sources.flatMap(({ file, lines }) =>
    lines.flatMap((line, i) => (match.test(line) && !isComment(line) && !allowed(line, file) ? [`${file}:${i + 1}: ${line.trim()}`] : [])),
  );
}

describe('the git gate', () => {
  it('names a git dir only in trusted-git.ts, or for the user\'s own repository with their switches', () => {
    expect(
      offending(/--git-dir=/, (line, file) => file === 'trusted-git.ts' || line.includes('USER_REPO_SWITCHES') || (file === 'base-snapshot.ts' && line.includes('IC_USER_GIT_DIR'))),
    ).toEqual([]);
  });

  it("takes a sandbox's own git runner (which sees its .git) only to seal it", () => {
    expect(offending(/handle\.git\(\)/, (line) => line.includes('sealGit('))).toEqual([]);
  });
});
