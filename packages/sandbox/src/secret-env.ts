/**
 * The model credentials of the process using this package. Nothing we spawn (namespace holders,
 * git, commands) inherits them: a command that read them from its own environment, or from
 * /proc/<pid>/environ of a process it can see, could hand them to the model.
 */
export const SECRET_ENV_VARS = ['ANTHROPIC_API_KEY', 'ANTHROPIC_AUTH_TOKEN'] as const;

/** This process's environment without the credentials (and without unset entries). */
export function inheritedEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (v !== undefined && !(SECRET_ENV_VARS as readonly string[]).includes(k)) env[k] = v;
  }
  return env;
}
