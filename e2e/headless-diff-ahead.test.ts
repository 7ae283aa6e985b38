// Headless, the root's diff is made while the model writes the reply after each of the root's tool
// calls, so that the last reply finds it made. A command that changes nothing in the sandbox (a
// test run) leaves it standing; one that writes does not, and what it wrote reaches the tree.
import { readFileSync, watch } from 'node:fs';
import { join } from 'node:path';
import { startFakeMessagesApi, type FakeBrain, type FakeMessagesApi } from '@infinity-code/runtime/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { cleanupTemps, git, gitRepo, runCli, tempDir } from './support/cli.js';
import { toolCalls, type Msg } from './support/model.js';

const BUGGY = 'return a - b;';
const FIXED = 'return a + b;';
const FILES = {
  'lib.js': `export function add(a, b) {\n  ${BUGGY}\n}\n`,
  'test.js': "import { add } from './lib.js';\nif (add(2, 3) !== 5) { console.error('add is wrong'); process.exit(1); }\nconsole.log('ok');\n",
  'package.json': '{ "type": "module" }\n',
};
const FACTS = 'diff-tree (facts)';

let api: FakeMessagesApi | undefined;
afterEach(async () => {
  await api?.close();
  api = undefined;
  cleanupTemps();
});

/** Resolves once `file` holds `text` (it is appended to as the run goes). */
function whenFileHas(file: string, text: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const has = () => {
      try {
        return readFileSync(file, 'utf8').includes(text);
      } catch {
        return false;
      }
    };
    if (has()) return resolve();
    const watcher = watch(file, () => {
      if (!has()) return;
      watcher.close();
      clearTimeout(limit);
      resolve();
    });
    // Only a failing run gets here: the test then says what the trace holds.
    const limit = setTimeout(() => {
      watcher.close();
      reject(new Error(`the trace never had "${text}":\n${readFileSync(file, 'utf8')}`));
    }, 20_000);
  });
}

/**
 * Reads lib.js, fixes it, runs `command`, answers. The reply that runs the command comes only
 * once the diff after the edit was made (the trace says so): a real model takes that long.
 */
function fixingBrain(command: string, trace: string): FakeBrain {
  return async (body) => {
    // Events injected as calls are not the model's.
    switch (toolCalls((body.messages ?? []) as Msg[]).filter((c) => c.name !== 'receive_event__injected').length) {
      case 0:
        return { toolUse: { name: 'read_file', input: { path: 'lib.js' } } };
      case 1:
        return { toolUse: { name: 'edit_file', input: { path: 'lib.js', old_str: BUGGY, new_str: FIXED } } };
      case 2:
        await whenFileHas(trace, FACTS);
        return { toolUse: { name: 'execute_command', input: { command } } };
      default:
        return { text: 'Fixed.' };
    }
  };
}

async function run(command: string): Promise<{ repo: string; facts: number; stderr: string }> {
  const trace = join(tempDir(), 'trace.log');
  api = await startFakeMessagesApi({ brain: fixingBrain(command, trace) });
  const repo = gitRepo(FILES);
  const r = await runCli(['-p', 'Fix add() so that node test.js passes.', '--yes'], {
    cwd: repo,
    env: { ANTHROPIC_API_KEY: 'test-key', ANTHROPIC_BASE_URL: api.url, INFINITY_CODE_TRACE: trace },
  });
  expect(r.code, r.stderr).toBe(0);
  const facts = readFileSync(trace, 'utf8').split('\n').filter((l) => l.includes(FACTS)).length;
  return { repo, facts, stderr: r.stderr };
}

describe('the root diff, made ahead of the last reply', () => {
  it('a test run that writes nothing in the sandbox leaves it standing: the run makes one diff, and applies it', async () => {
    const { repo, facts, stderr } = await run('node test.js');
    expect(facts, stderr).toBe(1);
    expect(readFileSync(join(repo, 'lib.js'), 'utf8')).toContain(FIXED);
    expect(git(repo, 'status', '--porcelain').trim()).toBe('M lib.js');
  });

  it('a command that writes makes it stale: the diff is made again, and the command’s file is applied too', async () => {
    const { repo, facts, stderr } = await run('node test.js && echo built > out.txt');
    expect(facts, stderr).toBe(2);
    expect(readFileSync(join(repo, 'lib.js'), 'utf8')).toContain(FIXED);
    expect(readFileSync(join(repo, 'out.txt'), 'utf8')).toBe('built\n');
  });
});
