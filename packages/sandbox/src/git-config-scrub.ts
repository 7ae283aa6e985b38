/**
 * A repository's git config as commands may see it: a remote URL is where a token often sits
 * (`https://x-access-token:ghp_…@github.com/o/r`, `https://ghp_…@github.com/o/r`), in a value or
 * in a `[url "…"]` section name, and `http.extraHeader` carries whole authorization headers.
 * Commands get the config with every URL's user part removed and those headers dropped; the
 * sandbox's git works the same without them (fetches need the network, which is the user's).
 */
const URL_USERINFO = /\b([a-z][a-z0-9+.-]*:\/\/)[^/\s"@]+@/gi;
const EXTRA_HEADER = /^\s*extraheader\s*=/i;

/** `text` (a git config file) without credentials in URLs or authorization headers; `text` itself when it has none. */
export function scrubGitConfig(text: string): string {
  const lines = text.split('\n');
  const kept = lines.filter((l) => !EXTRA_HEADER.test(l)).map((l) => l.replace(URL_USERINFO, '$1'));
  return kept.join('\n');
}
