// Which model a session runs, and the words about models the user reads. Light: it reads the
// model table's own module only (the TUI's first frame and `/model` need it).
import { MODELS, modelInfo, resolveModelId, retirement } from '@infinity-code/runtime/models';
import { EXIT, UserError } from './exit-codes.js';
import type { Pricing } from './pricing.js';

/** Where a model name came from: how the user changes it differs, so messages say it per source. */
export type ModelSource = { kind: 'flag' } | { kind: 'env' } | { kind: 'config'; file: string } | { kind: 'tui'; current: string };

/** A model's short alias (`sonnet`), when it has one. */
function aliasOf(id: string): string | undefined {
  return modelInfo(id)?.aliases.find((a) => resolveModelId(a) === id && a !== id);
}

/**
 * Why `name` can't be used, when it names a retired model (requests to it only fail), with its
 * retirement date, its replacement and how to choose that instead; undefined otherwise. An id
 * the table doesn't know is let through: the API decides.
 */
export function retiredModelMessage(name: string, source: ModelSource): string | undefined {
  const gone = retirement(name);
  if (!gone) return undefined;
  const what = `names ${modelInfo(name)?.name ?? name}, retired on ${gone.retired}: requests to it fail.`;
  const to = gone.replacement;
  const alias = aliasOf(to);
  const replacement = `Its replacement is ${to} (${modelInfo(to)?.name ?? to})`;
  switch (source.kind) {
    case 'flag':
      return `--model ${name} ${what} ${replacement}: run with --model ${to}${alias ? ` (or --model ${alias})` : ''}.`;
    case 'env':
      return (
        `ANTHROPIC_MODEL=${name} ${what} ${replacement}: export ANTHROPIC_MODEL=${to}${alias ? ` (or ${alias})` : ''}, ` +
        "or unset ANTHROPIC_MODEL to use your config's model or the default."
      );
    case 'config':
      return (
        `In ${source.file}, "model": "${name}" ${what} ${replacement}: set "model": "${to}"${alias ? ` (or "${alias}")` : ''}, ` +
        'or remove the key to use the default.'
      );
    case 'tui':
      return `/model ${name} ${what} ${replacement}: switch with /model ${to}${alias ? ` (or /model ${alias})` : ''}. The model is still ${source.current}.`;
  }
}

/**
 * The session's model: `--model`, else ANTHROPIC_MODEL, else the config's `model` (itself the
 * default, DEFAULT_MODEL, when no file sets it). An alias becomes its id here, so requests, the
 * status line and results name the real model. A retired model is refused (exit 3) before
 * anything is sent; the config's own value was checked when its file was read (see config.ts).
 */
export function chooseModel(o: { flag?: string; env: NodeJS.ProcessEnv; config: string }): string {
  const env = o.env.ANTHROPIC_MODEL;
  const chosen: [string, ModelSource] | undefined =
    o.flag !== undefined && o.flag !== '' ? [o.flag, { kind: 'flag' }] : env !== undefined && env !== '' ? [env, { kind: 'env' }] : undefined;
  if (!chosen) return resolveModelId(o.config);
  const retired = retiredModelMessage(...chosen);
  if (retired) throw new UserError(retired, EXIT.config);
  return resolveModelId(chosen[0]);
}

/** `$2`, `$0.10`: list prices to the cent, finer where a price has more. */
function dollars(n: number): string {
  return `$${n.toFixed(Math.max(2, (String(n).split('.')[1] ?? '').length))}`.replace(/\.00$/, '');
}

/**
 * `/model` without an argument: the current model and the table's current models, each with
 * its alias and price (the user's config wins over the list price, as it does for costs).
 */
export function modelsText(current: string, pricing: Pricing): string {
  const rows = MODELS.filter((m) => m.status.kind === 'current').map((m) => {
    const p = pricing.pricingOf(m.id);
    const inOut = (x: { input: number; output: number }) => `${dollars(x.input)} in / ${dollars(x.output)} out`;
    const price = !p
      ? 'no price'
      : p.shortPrompt
        ? `${inOut(p.shortPrompt.price)} (prompts up to ${p.shortPrompt.upToPromptTokens / 1000}K tokens), ${inOut(p.price)} above`
        : inOut(p.price);
    return [m.id === current ? '*' : ' ', m.id, aliasOf(m.id) ?? '', m.name, price];
  });
  const widths = [1, 1, 2, 3].map((i) => Math.max(...rows.map((r) => r[i].length)));
  const lines = rows.map((r) => `${r[0]} ${r[1].padEnd(widths[0])}  ${r[2].padEnd(widths[1])}  ${r[3].padEnd(widths[2])}  ${r[4]}`);
  const info = modelInfo(current);
  return [
    `Model: ${current}${info ? ` (${info.name})` : ''}. Switch with /model <alias|id>. Current models (USD per million tokens):`,
    ...lines,
  ].join('\n');
}

/** The context window of `model`: the config's `contextWindow` when set, else the table's (200K for ids it doesn't know). */
export function contextWindowFor(model: string, config: { contextWindow?: number }): number {
  return config.contextWindow ?? modelInfo(model)?.contextWindow ?? 200_000;
}
