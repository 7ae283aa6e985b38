import type { Ajv } from 'ajv';
import type { CompletionToolCall } from './completion.js';
import { OWN_TOOL_CHECKS, schemaHash, type ToolChecks } from './tool-checks.js';
import type { AsyncTool, SyncTool, Tool, ToolDefinition } from './tool.js';
import { toolDefinition } from './tool.js';
import { INJECTED_TOOL_NAME } from './wording.js';

/** A schema check as Ajv makes them: true when `data` fits; otherwise `errors` says why. */
export interface InputCheck {
  (data: unknown): boolean;
  errors?: ReadonlyArray<InputError> | null;
}

/** One of Ajv's errors (its standalone code makes the same), the fields the messages use. */
export interface InputError {
  instancePath?: string;
  message?: string;
  keyword?: string;
  params?: Record<string, unknown>;
  schemaPath?: string;
}

export type Resolution =
  | { kind: 'error'; message: string }
  | { kind: 'sync'; tool: SyncTool; input: Record<string, unknown> }
  | { kind: 'async'; tool: AsyncTool; input: Record<string, unknown> };

/**
 * The tools offered to the model, and the gate a call passes before it runs: unknown names,
 * the injected-event name, unparsable and schema-violating arguments all become error results
 * the model can read and correct.
 */
/** Why a tool that arrives once conversations are under way is not offered. */
export const TOOLS_AFTER_START =
  "it became ready after the conversation's first model request, and a conversation's tools can't change " +
  '(the model\'s thinking is bound to them); it is offered from the next run';

export class ToolRegistry {
  private readonly tools = new Map<string, { tool: Tool; validate?: InputCheck }>();
  /** For tools added later (MCP servers'): schemas checked against JSON Schema's meta-schema. */
  #ajv: Ajv | undefined;
  /**
   * For the tools the system is made with: their schemas are the caller's own, compiled on each
   * tool's first call and not checked against JSON Schema's meta-schema first. Compiling every
   * schema up front (and the meta-schema, for the check) took tens of milliseconds before a
   * session's first request, for tools most sessions never call. Both validators are made on
   * first use too: making one sets up its vocabularies, CPU the first request must not wait for.
   */
  #ownAjv: Ajv | undefined;
  /**
   * Ajv itself, loaded on first need (a reply with tool calls, a tool server's tools): loading it
   * is CPU that a session's first model request must not wait for.
   */
  #ajvClass: Promise<typeof Ajv> | undefined;
  #loadedAjv: typeof Ajv | undefined;
  private defs: readonly ToolDefinition[];
  /**
   * The list as the first completion got it: from then on every request offers exactly this.
   * A conversation's tools may not change under it: the model's thinking blocks are bound to
   * the request before them, tools included, and the API refuses them once anything differs.
   */
  #offered: readonly ToolDefinition[] | undefined;

  /**
   * `validators`: checks made ahead of time (tool-checks.ts), by tool name. A tool with one made
   * from its schema as it is never needs Ajv loaded or a schema compiled; any other is compiled on
   * first use as before, so a stale entry only costs time.
   */
  /**
   * `withhold`: names of tools (given now or added later) that are left out as if they did not
   * exist: never offered, and a call to one is an unknown tool's (see SystemOptions.withhold).
   */
  constructor(
    tools: readonly Tool[],
    validators: ToolChecks = new Map(),
    private readonly withhold: (name: string) => boolean = () => false,
  ) {
    tools = tools.filter((t) => !withhold(t.name));
    for (const tool of tools) {
      const problem = this.problem(tool);
      if (problem) throw new Error(problem);
      const made = validators.get(tool.name);
      const validate = made && made.schemaHash === schemaHash(tool.input_schema) ? made.check : undefined;
      this.tools.set(tool.name, validate ? { tool, validate } : { tool });
    }
    // Built once: a slice must not allocate the tool list per completion.
    this.defs = tools.map(toolDefinition);
  }

  /**
   * Offers more tools from now on (a tool server that came up after the session started): every
   * thread's next completion gets the longer list, still the same for all of them. A tool that
   * can't be added (its name is taken or reserved, its schema doesn't compile) is left out and
   * returned with the reason; the others are added.
   */
  async add(tools: readonly Tool[]): Promise<Array<{ name: string; reason: string }>> {
    // Not a rejection: the user asked for these to be left out.
    tools = tools.filter((t) => !this.withhold(t.name));
    if (tools.length === 0) return [];
    if (this.#offered) {
      // Kept out of the conversations under way (see #offered); offered from the next one.
      return tools.map((t) => ({ name: t.name, reason: TOOLS_AFTER_START }));
    }
    const AjvClass = await this.ready();
    const rejected: Array<{ name: string; reason: string }> = [];
    const added: Tool[] = [];
    for (const tool of tools) {
      let reason = this.problem(tool);
      if (!reason) {
        try {
          this.tools.set(tool.name, { tool, validate: (this.#ajv ??= new AjvClass({ allErrors: true, strict: false })).compile(tool.input_schema) });
          added.push(tool);
          continue;
        } catch (err) {
          reason = `its input schema is not valid JSON Schema (${err instanceof Error ? err.message : String(err)})`;
        }
      }
      rejected.push({ name: tool.name, reason });
    }
    // A new array: a slice that read the list keeps the one it sent.
    if (added.length > 0) this.defs = [...this.defs, ...added.map(toolDefinition)];
    return rejected;
  }

  /**
   * Whether resolve() can check these calls now: every tool they name (that exists) has its
   * check already. Otherwise ready() must settle first.
   */
  checksReady(calls: readonly { name: string }[]): boolean {
    return calls.every((c) => {
      const entry = this.tools.get(c.name);
      return entry === undefined || entry.validate !== undefined;
    });
  }

  /** Loads the validator (once); resolve() needs it loaded unless checksReady() says so. */
  async ready(): Promise<typeof Ajv> {
    this.#ajvClass ??= import('./ajv-module.js').then((m) => (this.#loadedAjv = m.Ajv));
    return this.#ajvClass;
  }

  /**
   * Loads the validator, then compiles the schemas of tools not called yet, one per turn of the
   * event loop: for a caller that knows the process is idle (waiting on the model), so that a
   * tool's first call does not pay for it.
   */
  async warm(): Promise<void> {
    if ([...this.tools.values()].every((e) => e.validate !== undefined)) return;
    await this.ready();
    for (const entry of [...this.tools.values()]) {
      if (entry.validate) continue;
      await new Promise<void>((resolve) => setImmediate(resolve));
      try {
        entry.validate ??= this.ownAjv().compile(entry.tool.input_schema);
      } catch {
        // A broken schema is reported when the tool is called (see resolve).
      }
    }
  }

  private ownAjv(): Ajv {
    const AjvClass = this.#loadedAjv;
    if (!AjvClass) throw new Error('ToolRegistry.resolve() was called before ready() settled');
    return (this.#ownAjv ??= new AjvClass(OWN_TOOL_CHECKS));
  }

  private problem(tool: Tool): string | undefined {
    if (tool.name === INJECTED_TOOL_NAME) return `${INJECTED_TOOL_NAME} is reserved for injected events and can't be a tool`;
    if (this.tools.has(tool.name)) return `Two tools are named ${tool.name}`;
    return undefined;
  }

  /**
   * The tools offered to the model: the same list, byte for byte, for every thread, so that all
   * threads of a session share one cached prompt prefix. A tool a thread may not use (a root's
   * report_to_parent) answers with an error instead of being left out.
   */
  definitions(): readonly ToolDefinition[] {
    return this.defs;
  }

  /** What a completion offers: definitions(), frozen at the first call (see #offered). */
  offered(): readonly ToolDefinition[] {
    return (this.#offered ??= this.defs);
  }

  /** Whether tools can still be added to what conversations are offered. */
  get frozen(): boolean {
    return this.#offered !== undefined;
  }

  isPassive(name: string): boolean {
    const tool = this.tools.get(name)?.tool;
    return tool?.kind === 'async' && tool.passive === true;
  }

  get(name: string): Tool | undefined {
    return this.tools.get(name)?.tool;
  }

  /** The display line the call's tool gives it (see Tool.display); undefined for a tool without one, or unknown. */
  displayOf(call: { name: string; input: Record<string, unknown> }): string | undefined {
    try {
      return this.tools.get(call.name)?.tool.display?.(call.input);
    } catch {
      // A display line is a nicety: input the tool can't read (a stored call) gets none.
      return undefined;
    }
  }

  /** The gate a call passes; after ready() (the validator must be loaded). */
  resolve(call: CompletionToolCall): Resolution {
    if (call.name === INJECTED_TOOL_NAME) {
      return {
        kind: 'error',
        message: `Error: you cannot directly invoke ${INJECTED_TOOL_NAME}, invocations will automatically be injected when events arrive.`,
      };
    }
    const entry = this.tools.get(call.name);
    if (!entry) {
      const names = [...this.tools.keys()].join(', ') || 'none';
      return {
        kind: 'error',
        message: `Error: tool '${call.name}' does not exist. Available tools: ${names}.`,
      };
    }
    if (call.inputError !== undefined) {
      return {
        kind: 'error',
        message: `Error: the arguments of ${call.name} were not valid JSON (${call.inputError}). Send one JSON object that matches the tool's input schema.`,
      };
    }
    let validate = entry.validate;
    if (validate === undefined) {
      const own = this.ownAjv();
      try {
        validate = entry.validate = own.compile(entry.tool.input_schema);
      } catch (err) {
        // The tool's own schema is broken (ajv cannot compile it): its calls cannot be checked.
        const why = err instanceof Error ? err.message : String(err);
        return { kind: 'error', message: `Error: the tool ${call.name} cannot be used: its input schema is invalid (${why}).` };
      }
    }
    if (!validate(call.input)) {
      const detail = describeInputErrors(validate.errors ?? [], call.input, entry.tool.input_schema);
      return { kind: 'error', message: `Error: invalid arguments for ${call.name}: ${detail}` };
    }
    return entry.tool.kind === 'sync'
      ? { kind: 'sync', tool: entry.tool, input: call.input }
      : { kind: 'async', tool: entry.tool, input: call.input };
  }
}

/**
 * Ajv's errors as sentences a model can act on, each naming the property and what was expected:
 * `Unknown property "foo" (accepted: path, start_line).`, `Missing required property "path"
 * (string).`, `"start_line" must be integer (got string "one").`, `"mode" must be one of "a", "b"
 * (got "c").`, `"n" must be >= 1 (got 0).` Anything else keeps Ajv's wording, after the property.
 */
export function describeInputErrors(errors: readonly InputError[], input: unknown, schema: unknown): string {
  const sentences = errors.map((e) => describeError(e, input, schema));
  return [...new Set(sentences)].join(' ') || 'they do not match the input schema.';
}

function describeError(e: InputError, input: unknown, schema: unknown): string {
  const pointer = e.instancePath ?? '';
  const at = propertyName(pointer);
  const params = e.params ?? {};
  const value = valueAt(input, pointer);
  // The schema of the object the keyword belongs to: the schema path without the keyword.
  const owner = schemaAt(schema, (e.schemaPath ?? '').replace(/\/[^/]*$/, ''));
  const inObject = at === '' ? '' : ` in "${at}"`;
  switch (e.keyword) {
    case 'additionalProperties': {
      const name = String(params.additionalProperty);
      const accepted = Object.keys(record(record(owner)?.properties) ?? {});
      return `Unknown property "${name}"${inObject}${accepted.length > 0 ? ` (accepted: ${accepted.join(', ')})` : ' (it takes no properties)'}.`;
    }
    case 'required': {
      const name = String(params.missingProperty);
      const type = typeName(record(record(record(owner)?.properties)?.[name])?.type);
      return `Missing required property "${name}"${inObject}${type ? ` (${type})` : ''}.`;
    }
    case 'type': {
      const expected = typeName(params.type) ?? 'of another type';
      return at === '' ? `The arguments must be a JSON ${expected} (got ${got(value)}).` : `"${at}" must be ${expected} (got ${got(value)}).`;
    }
    case 'enum': {
      const allowed = Array.isArray(params.allowedValues) ? params.allowedValues.map((v) => JSON.stringify(v)).join(', ') : '';
      return `"${at}" must be one of ${allowed} (got ${got(value)}).`;
    }
    case 'const':
      return `"${at}" must be ${JSON.stringify(params.allowedValue)} (got ${got(value)}).`;
    case 'minimum':
    case 'maximum':
    case 'exclusiveMinimum':
    case 'exclusiveMaximum':
      return `"${at}" must be ${String(params.comparison)} ${String(params.limit)} (got ${got(value)}).`;
    default:
      return `${at === '' ? 'The arguments' : `"${at}"`} ${e.message ?? 'are invalid'}.`;
  }
}

/** `/a/b/0` as `a.b[0]` (JSON pointer escapes undone); '' for the arguments themselves. */
function propertyName(pointer: string): string {
  if (pointer === '') return '';
  return pointer
    .slice(1)
    .split('/')
    .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'))
    .reduce((name, part) => (/^\d+$/.test(part) && name !== '' ? `${name}[${part}]` : name === '' ? part : `${name}.${part}`), '');
}

function valueAt(input: unknown, pointer: string): unknown {
  if (pointer === '') return input;
  let v: unknown = input;
  for (const raw of pointer.slice(1).split('/')) {
    const part = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    v = typeof v === 'object' && v !== null ? (v as Record<string, unknown>)[part] : undefined;
  }
  return v;
}

function schemaAt(schema: unknown, path: string): unknown {
  let s: unknown = schema;
  for (const raw of path.replace(/^#\/?/, '').split('/')) {
    if (raw === '') continue;
    let part = raw;
    try {
      part = decodeURIComponent(raw);
    } catch {
      // Not URI-encoded after all: used as it is.
    }
    s = record(s)?.[part.replace(/~1/g, '/').replace(/~0/g, '~')];
  }
  return s;
}

function record(v: unknown): Record<string, unknown> | undefined {
  return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
}

function typeName(t: unknown): string | undefined {
  if (typeof t === 'string') return t.includes(',') ? t.split(',').join(' or ') : t;
  if (Array.isArray(t)) return t.map(String).join(' or ');
  return undefined;
}

/** What was sent: its JSON type, and the value itself when it is short. */
function got(v: unknown): string {
  if (v === undefined) return 'nothing';
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'object') return 'object';
  const type = typeof v === 'number' && Number.isInteger(v) ? 'integer' : typeof v;
  const text = JSON.stringify(v);
  return text.length <= 40 ? `${type} ${text}` : type;
}
