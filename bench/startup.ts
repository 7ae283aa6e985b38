// CLI start-up: wall time of `infinity-code --version` (best and median of RUNS), from the built
// binary (run `pnpm build` first).
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const bin = fileURLToPath(new URL('../packages/cli/dist/main.js', import.meta.url));
if (!existsSync(bin)) throw new Error(`${bin} is missing: run \`pnpm build\` first`);
const RUNS = Number(process.env.RUNS ?? 15);

const times: number[] = [];
for (let i = 0; i < RUNS; i++) {
  const t0 = performance.now();
  execFileSync(process.execPath, [bin, '--version'], { stdio: 'ignore' });
  times.push(performance.now() - t0);
}
times.sort((a, b) => a - b);
console.log(
  `startup version_ms_median=${times[Math.floor(RUNS / 2)]!.toFixed(0)} version_ms_best=${times[0]!.toFixed(0)} runs=${RUNS}`,
);
