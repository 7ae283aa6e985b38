/**
 * Which variables of our environment a spawned process (namespace holders, git, commands) must
 * not inherit. A command that reads a credential from its own environment, or from
 * /proc/<pid>/environ of a process it can see, can print it, and its output goes to the model.
 * So every variable that looks like a credential is removed unless the user lets it through by
 * name (`allow`): removing a harmless variable costs a command a setting, passing a secret costs
 * the secret.
 */

/**
 * The model credentials of the process using this package: never passed on, whatever is allowed.
 * The one list of their names (the CLI, the tools and MCP servers' environments read it too).
 */
export const SECRET_ENV_VARS = ['ANTHROPIC_API_KEY', 'ANTHROPIC_AUTH_TOKEN'] as const;

/** Name parts (of the upper-cased name) that mark a credential wherever they appear. */
const SECRET_NAME_PARTS = [
  'TOKEN',
  'SECRET',
  'PASSWORD',
  'PASSWD',
  'PASSPHRASE',
  'CREDENTIAL',
  'APIKEY',
  'API_KEY',
  'ACCESSKEY',
  'ACCESS_KEY',
  'PRIVATEKEY',
  'PRIVATE_KEY',
  'KEYFILE',
  'ASKPASS',
  'COOKIE',
  'WEBHOOK',
  'CONNECTION_STRING',
  'CONNSTR',
];

/**
 * Whole-word patterns: `_KEY` as a suffix or a word (AWS_SECRET_ACCESS_KEY, SSH_KEY_PATH), AUTH
 * as a word (SSH_AUTH_SOCK, NODE_AUTH_TOKEN, npm_config__auth; not GIT_AUTHOR_NAME), PASS and
 * PWD as a word after a prefix (SMTP_PASS, MYSQL_PWD; not PWD itself), DSNs (SENTRY_DSN), JWTs
 * (CI_JOB_JWT) and secret keys named `_SK` (STRIPE_SK; not TASK).
 */
const SECRET_NAME_WORDS = [/_KEYS?(_|$)/, /(^|_)O?AUTH(_|$)/, /._PASS(_|$)/, /._PWD$/, /(^|_)DSN$/, /(^|_)JWT(_|$)/, /._SK$/];

/** Whole prefixes: cloud accounts whose variables are credentials or lead to them. */
const SECRET_PREFIXES = ['AWS_', 'AZURE_'];

/** Exceptions to the prefixes: where to act, not with what right. */
const HARMLESS = new Set(['AWS_REGION', 'AWS_DEFAULT_REGION', 'AWS_PROFILE', 'AWS_DEFAULT_PROFILE']);

/**
 * Credentials by exact name that no pattern catches: an agent socket or a session bus is a
 * credential (whoever reaches it can sign, or ask the keyring); kube and X11 config lead to
 * cluster and display access; VS Code's git IPC hands out GitHub credentials.
 */
const SECRET_NAMES = new Set([
  'SSH_AGENT_PID',
  'GPG_AGENT_INFO',
  'KUBECONFIG',
  'XAUTHORITY',
  'DBUS_SESSION_BUS_ADDRESS',
  'VSCODE_GIT_IPC_HANDLE',
]);

/**
 * Values that are credentials whatever the name: URLs with a password (postgres://u:p@h),
 * authorization headers (git's http.extraheader in GIT_CONFIG_PARAMETERS), private keys, and
 * the well-known token formats (GitHub, GitLab, Slack, Anthropic, AWS keys).
 */
const SECRET_VALUES = [
  /^[a-z][a-z0-9+.-]*:\/\/[^/\s:@]*:[^/\s@]+@/i,
  /authorization:\s*(basic|bearer|token)\s/i,
  /-----BEGIN [A-Z ]*PRIVATE KEY-----/,
  /\b(gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}|glpat-[A-Za-z0-9_-]{20,}|xox[abposr]-[A-Za-z0-9-]{10,}|sk-ant-[A-Za-z0-9_-]{10,}|AKIA[0-9A-Z]{16})/,
  // Stripe (secret, restricted, webhook), OpenAI, Google API keys, Hugging Face, npm, PyPI, and a
  // signed JWT (header.payload.signature).
  /\b((sk|rk)_(live|test)_[A-Za-z0-9]{10,}|whsec_[A-Za-z0-9]{10,}|sk-(proj-)?[A-Za-z0-9_-]{20,}|AIza[0-9A-Za-z_-]{30,}|hf_[A-Za-z0-9]{30,}|npm_[A-Za-z0-9]{30,}|pypi-AgE[A-Za-z0-9_-]{10,})/,
  /\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}/,
];

/** True when a variable named `name` (holding `value`, if known) is to be kept from processes. */
export function isSecretEnv(name: string, value?: string): boolean {
  const upper = name.toUpperCase();
  if ((SECRET_ENV_VARS as readonly string[]).includes(upper)) return true;
  if (HARMLESS.has(upper)) return false;
  if (SECRET_NAMES.has(upper)) return true;
  if (SECRET_PREFIXES.some((p) => upper.startsWith(p))) return true;
  if (SECRET_NAME_PARTS.some((p) => upper.includes(p))) return true;
  if (SECRET_NAME_WORDS.some((w) => w.test(upper))) return true;
  return value !== undefined && SECRET_VALUES.some((v) => v.test(value));
}

export interface EnvFilter {
  /** Names let through although they look like credentials (never the model credentials). */
  allow?: readonly string[];
  /** Names removed although they don't look like credentials. */
  deny?: readonly string[];
}

/** True when `name` may be passed on under `filter`: the deny list wins over the allow list. */
export function passesEnvFilter(name: string, value: string | undefined, filter: EnvFilter = {}): boolean {
  if ((SECRET_ENV_VARS as readonly string[]).includes(name.toUpperCase())) return false;
  if (filter.deny?.includes(name)) return false;
  if (filter.allow?.includes(name)) return true;
  return !isSecretEnv(name, value);
}

/** `env` without the credentials (and without unset entries). */
export function secretFreeEnv(env: NodeJS.ProcessEnv, filter: EnvFilter = {}): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(env)) {
    if (v !== undefined && passesEnvFilter(k, v, filter)) out[k] = v;
  }
  return out;
}

/** This process's environment without the credentials: what everything we spawn starts from. */
export function inheritedEnv(): Record<string, string> {
  return secretFreeEnv(process.env);
}

/**
 * What commands get of this process's environment: an allowlist, not everything that doesn't
 * look like a credential (a guess that missed STRIPE_SK and CI_JOB_JWT). Where to find things and
 * how to build: the path, the home, the user, locale, terminal, time zone, CI markers and the
 * toolchains' own settings. The user adds names with `sandbox.envAllow`. Credential-like names
 * and values among these still stay out.
 */
const COMMAND_ENV_NAMES = new Set([
  'PATH', 'HOME', 'USER', 'LOGNAME', 'SHELL', 'TERM', 'TZ', 'LANG', 'LANGUAGE', 'HOSTNAME',
  'CI', 'CONTINUOUS_INTEGRATION', 'BUILD_NUMBER', 'GITLAB_CI', 'CIRCLECI', 'TRAVIS', 'BUILDKITE', 'TF_BUILD', 'JENKINS_URL',
  'NODE_OPTIONS', 'NODE_PATH', 'NODE_ENV', 'NODE_EXTRA_CA_CERTS', 'COREPACK_HOME', 'BUN_INSTALL', 'DENO_DIR', 'DENO_INSTALL',
  'GOPATH', 'GOROOT', 'GOBIN', 'GOFLAGS', 'GOPROXY', 'GOPRIVATE', 'GONOSUMDB', 'GONOPROXY', 'GOCACHE', 'GOMODCACHE',
  'GOTOOLCHAIN', 'GO111MODULE', 'CGO_ENABLED', 'GOOS', 'GOARCH',
  'PYTHONPATH', 'PYTHONHOME', 'PYTHONDONTWRITEBYTECODE', 'PYTHONUNBUFFERED', 'VIRTUAL_ENV', 'PIPX_HOME', 'PIPX_BIN_DIR',
  'GEM_HOME', 'GEM_PATH', 'RUBYOPT',
  'CC', 'CXX', 'CFLAGS', 'CXXFLAGS', 'CPPFLAGS', 'LDFLAGS', 'PKG_CONFIG_PATH', 'LD_LIBRARY_PATH', 'LIBRARY_PATH',
  'CPATH', 'MAKEFLAGS', 'SSL_CERT_FILE', 'SSL_CERT_DIR', 'REQUESTS_CA_BUNDLE', 'CURL_CA_BUNDLE',
  'XDG_CONFIG_HOME', 'XDG_CACHE_HOME', 'XDG_DATA_HOME', 'XDG_STATE_HOME',
]);

/** Prefixes of toolchain and CI variables commands get (LC_ALL, npm_config_registry, GITHUB_SHA, …). */
const COMMAND_ENV_PREFIXES = [
  'LC_', 'npm_config_', 'NPM_CONFIG_', 'PNPM_', 'YARN_', 'NVM_', 'FNM_', 'VOLTA_', 'CARGO_', 'RUSTUP_', 'RUST',
  'PYENV_', 'CONDA_', 'PIP_', 'UV_', 'POETRY_', 'JAVA_', 'JDK_', 'GRADLE_', 'MAVEN_', 'M2_', 'DOTNET_', 'RBENV_',
  'CMAKE_', 'GITHUB_', 'RUNNER_', 'CI_',
];

/** Whether commands get `name` from this process's environment (before credentials are taken out). */
export function isCommandEnvName(name: string): boolean {
  return COMMAND_ENV_NAMES.has(name) || COMMAND_ENV_PREFIXES.some((p) => name.startsWith(p));
}

/** The environment every command starts from: the allowlisted, credential-free part of ours. */
export function commandBaseEnv(): Record<string, string> {
  return secretFreeEnv(Object.fromEntries(Object.entries(process.env).filter(([k]) => isCommandEnvName(k))));
}
