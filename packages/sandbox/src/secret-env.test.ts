import { describe, expect, it } from 'vitest';
import { commandBaseEnv, inheritedEnv, isCommandEnvName, isSecretEnv, passesEnvFilter, secretFreeEnv } from './secret-env.js';

describe('isSecretEnv', () => {
  it.each([
    'ANTHROPIC_API_KEY',
    'ANTHROPIC_AUTH_TOKEN',
    'GITHUB_TOKEN',
    'GH_TOKEN',
    'NPM_TOKEN',
    'NODE_AUTH_TOKEN',
    'CI_JOB_TOKEN',
    'ACTIONS_ID_TOKEN_REQUEST_URL',
    'npm_config__authToken',
    'npm_config__auth',
    'AWS_SECRET_ACCESS_KEY',
    'AWS_ACCESS_KEY_ID',
    'AWS_SESSION_TOKEN',
    'AWS_SHARED_CREDENTIALS_FILE',
    'AZURE_CLIENT_SECRET',
    'AZURE_STORAGE_CONNECTION_STRING',
    'AZURE_TENANT_ID',
    'GOOGLE_APPLICATION_CREDENTIALS',
    'DOCKER_AUTH_CONFIG',
    'KUBECONFIG',
    'SSH_AUTH_SOCK',
    'SSH_AGENT_PID',
    'GPG_AGENT_INFO',
    'DBUS_SESSION_BUS_ADDRESS',
    'GIT_ASKPASS',
    'VSCODE_GIT_IPC_HANDLE',
    'MY_SERVICE_PASSWORD',
    'PGPASSWORD',
    'MYSQL_PWD',
    'SMTP_PASS',
    'DB_PASSWD',
    'JWT_SECRET',
    'CLIENT_SECRET_FILE',
    'STRIPE_SECRET_KEY',
    'OPENAI_API_KEY',
    'MAPS_APIKEY',
    'SIGNING_KEY',
    'SSH_KEY_PATH',
    'SENTRY_DSN',
    'SLACK_WEBHOOK_URL',
    'SESSION_COOKIE',
    'GCLOUD_KEYFILE_JSON',
    'CI_JOB_JWT',
    'CI_JOB_JWT_V2',
    'STRIPE_SK',
  ])('%s is a credential', (name) => {
    expect(isSecretEnv(name, 'x')).toBe(true);
  });

  it.each([
    'PATH',
    'HOME',
    'LANG',
    'LC_ALL',
    'TERM',
    'USER',
    'SHELL',
    'PWD',
    'OLDPWD',
    'TMPDIR',
    'EDITOR',
    'NODE_OPTIONS',
    'GIT_AUTHOR_NAME',
    'GIT_AUTHOR_EMAIL',
    'GIT_COMMITTER_NAME',
    'AWS_REGION',
    'AWS_DEFAULT_REGION',
    'AWS_PROFILE',
    'XDG_CONFIG_HOME',
    'CI',
    'KEYTIMEOUT',
    'PASSTHROUGH_MODE',
    'HTTP_PROXY',
    'TASK',
    'DISK',
    'JWTLIB_VERSION',
  ])('%s is kept', (name) => {
    expect(isSecretEnv(name, 'plain-value')).toBe(false);
  });

  it.each([
    ['DATABASE_URL', 'postgres://app:hunter2@db.internal:5432/app'],
    ['PIP_INDEX_URL', 'https://__token__:pypi-AgEIcHlwaS5vcmc@pypi.example/simple'],
    ['GIT_CONFIG_PARAMETERS', "'http.extraheader=AUTHORIZATION: basic eC1hY2Nlc3M='"],
    ['DEPLOY', '-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaA==\n-----END OPENSSH PRIVATE KEY-----'],
    ['MY_GH', 'ghp_0123456789abcdefghijABCDEFGHIJ012345'],
    ['SOME_PAT', 'github_pat_11ABCDEFG0123456789_abcdefghij'],
    ['CHAT', 'xoxb-1234567890-abcdefghij'],
    ['MODEL', 'sk-ant-api03-abcdefghijklmnop'],
    ['ID', 'AKIAIOSFODNN7EXAMPLE'],
    ['PAYMENTS', 'sk_live_51H8abcdefghijklmnopqrstu'],
    ['RESTRICTED', 'rk_test_51H8abcdefghijklmnop'],
    ['HOOK', 'whsec_abcdefghijklmnopqrst'],
    ['LLM', 'sk-proj-abcdefghijklmnopqrstuvwxyz0123'],
    ['MAPS', 'AIzaSyA-abcdefghijklmnopqrstuvwxyz012'],
    ['HUB', 'hf_abcdefghijklmnopqrstuvwxyzABCDEFGH'],
    ['REGISTRY', 'npm_abcdefghijklmnopqrstuvwxyz0123456789'],
    ['IDENTITY', 'eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJqb2IifQ.c2lnbmF0dXJlLWJ5dGVz'],
  ])('%s is a credential by its value', (name, value) => {
    expect(isSecretEnv(name, value)).toBe(true);
    expect(isSecretEnv(name)).toBe(false);
  });

  it.each([
    ['HOMEPAGE', 'https://example.com/a:b'],
    ['REPO', 'git@github.com:owner/repo.git'],
    ['SERVER', 'http://[::1]:8080/'],
    ['NOTE', 'ghp_short'],
    ['DESC', 'a task-list of sk_ things and eyJ.short.bits'],
  ])('%s=%s is kept', (name, value) => {
    expect(isSecretEnv(name, value)).toBe(false);
  });
});

describe('secretFreeEnv', () => {
  const env = {
    PATH: '/usr/bin',
    HOME: '/home/u',
    GITHUB_TOKEN: 'gh',
    AWS_SECRET_ACCESS_KEY: 'aws',
    ANTHROPIC_API_KEY: 'sk',
    PLAIN: 'p',
    UNSET: undefined,
  };

  it('drops credentials and unset entries, keeps the rest', () => {
    expect(secretFreeEnv(env)).toEqual({ PATH: '/usr/bin', HOME: '/home/u', PLAIN: 'p' });
  });

  it('lets allowed names through, but never the model credentials', () => {
    const out = secretFreeEnv(env, { allow: ['GITHUB_TOKEN', 'ANTHROPIC_API_KEY'] });
    expect(out.GITHUB_TOKEN).toBe('gh');
    expect(out).not.toHaveProperty('ANTHROPIC_API_KEY');
    expect(out).not.toHaveProperty('AWS_SECRET_ACCESS_KEY');
  });

  it('removes denied names, and a denied name stays out even when also allowed', () => {
    expect(secretFreeEnv(env, { deny: ['PLAIN'] })).not.toHaveProperty('PLAIN');
    expect(passesEnvFilter('GITHUB_TOKEN', 'gh', { allow: ['GITHUB_TOKEN'], deny: ['GITHUB_TOKEN'] })).toBe(false);
  });

  it('inheritedEnv reads this process: a credential set now is not in it', () => {
    process.env.IC_TEST_SECRET_TOKEN = 'abc';
    process.env.IC_TEST_PLAIN = 'def';
    try {
      const out = inheritedEnv();
      expect(out).not.toHaveProperty('IC_TEST_SECRET_TOKEN');
      expect(out.IC_TEST_PLAIN).toBe('def');
    } finally {
      delete process.env.IC_TEST_SECRET_TOKEN;
      delete process.env.IC_TEST_PLAIN;
    }
  });

  it('commands start from an allowlist: where things are, locale, CI and toolchain settings; nothing else, and no credential among them', () => {
    for (const name of ['PATH', 'HOME', 'LANG', 'LC_ALL', 'TERM', 'TZ', 'CI', 'GITHUB_SHA', 'npm_config_registry', 'GOPATH', 'JAVA_HOME', 'CARGO_HOME', 'VIRTUAL_ENV']) {
      expect(isCommandEnvName(name), name).toBe(true);
    }
    for (const name of ['SOME_SETTING', 'DATABASE_URL', 'MY_APP_KEY_ID', 'EDITOR', 'TMPDIR', 'SSH_AUTH_SOCK', 'DISPLAY']) {
      expect(isCommandEnvName(name), name).toBe(false);
    }
    const set = { IC_TEST_UNLISTED: 'private setting', GITHUB_TOKEN: 'ghp_' + 'a'.repeat(36), GITHUB_SHA: 'abc123', LC_IC_TEST: 'x' };
    Object.assign(process.env, set);
    try {
      const out = commandBaseEnv();
      expect(out).not.toHaveProperty('IC_TEST_UNLISTED');
      expect(out).not.toHaveProperty('GITHUB_TOKEN');
      expect(out.GITHUB_SHA).toBe('abc123');
      expect(out.LC_IC_TEST).toBe('x');
      expect(out.PATH).toBe(process.env.PATH);
    } finally {
      for (const k of Object.keys(set)) delete process.env[k];
    }
  });
});
