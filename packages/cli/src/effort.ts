// How hard the model works (`output_config.effort`): --effort, the config's `effort`, `/effort`.
// Unset, nothing is sent and the model's own default applies. Light: the model table only.
import { EFFORTS, isEffort, modelInfo, type Effort } from '@infinity-code/runtime/models';
import { EXIT, UserError } from './exit-codes.js';

/** The levels `model` accepts: the table's; any level for a model it doesn't know (the API decides). */
export function effortsFor(model: string): readonly Effort[] {
  return modelInfo(model)?.efforts ?? EFFORTS;
}

/** Why `model` can't run at `effort` (naming the levels it accepts), or undefined when it can. */
export function effortProblem(effort: Effort, model: string): string | undefined {
  const levels = effortsFor(model);
  if (levels.includes(effort)) return undefined;
  return `${model} does not accept effort ${effort}: ${levels.length === 0 ? 'it accepts no effort level' : `it accepts ${levels.join(', ')}`}.`;
}

/**
 * The session's effort: --effort (already one of the levels: commander checks), else the config's.
 * One the model doesn't accept is refused before anything is sent: a usage error for the flag
 * (exit 2), a config error for the file (exit 3).
 */
export function chooseEffort(o: { flag?: Effort; config?: Effort; configFile?: string; model: string }): Effort | undefined {
  if (o.flag !== undefined) {
    const problem = effortProblem(o.flag, o.model);
    if (problem) throw new UserError(`--effort ${o.flag}: ${problem} Choose one of those, or leave --effort out for the model's default.`, EXIT.usage);
    return o.flag;
  }
  if (o.config === undefined) return undefined;
  const problem = effortProblem(o.config, o.model);
  if (problem) {
    throw new UserError(
      `In ${o.configFile ?? 'your config'}, "effort" is ${o.config}, but the session's model ${problem} Change "effort" there, ` +
        'remove it for the model\'s default, or choose the level with --effort.',
      EXIT.config,
    );
  }
  return o.config;
}

/** `/effort` without a level: the level in use (or the model's default) and what the model accepts. */
export function effortText(model: string, effort: Effort | undefined): string {
  const fallback = modelInfo(model)?.defaultEffort;
  const now =
    effort !== undefined
      ? `Effort: ${effort}.`
      : `Effort: the model's default${fallback ? `, ${fallback}` : ''} (none is sent).`;
  const levels = effortsFor(model);
  const about =
    levels.length === 0
      ? `${model} accepts no effort level.`
      : `${model} accepts ${levels.join(', ')}${fallback ? `; its default is ${fallback}` : ''}.`;
  return `${now} ${about} Set it with /effort <level>, or /effort default for the model's own.`;
}

/** What `/effort <word>` asks for: a level, the model's default (`default`), or nothing sensible. */
export function parseEffortArg(word: string): { effort: Effort | undefined } | { error: string } {
  if (word === 'default') return { effort: undefined };
  if (isEffort(word)) return { effort: word };
  return { error: `Unknown effort level "${word}". Levels: ${EFFORTS.join(', ')}, or default for the model's own.` };
}
