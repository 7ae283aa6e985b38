// Why a connection to the model API could not be made at all, in words a user can act on. The
// SDK wraps what fetch (undici) threw in an APIConnectionError; the useful part, an errno or
// OpenSSL code such as ECONNREFUSED, lies a few causes deep.

/** A connection that never got as far as an HTTP response, and why. */
export interface ConnectFailure {
  /** The errno or OpenSSL code (ECONNREFUSED, ENOTFOUND, CERT_HAS_EXPIRED...), or 'bad port'. */
  code: string;
  /** Says what happened, for the middle of a sentence. */
  reason: string;
  /** The certificate was not trusted: a proxy that re-signs TLS traffic is a common cause. */
  certificate: boolean;
}

// Node's certificate verification codes (tls.TLSSocket#authorizationError) and its own TLS codes.
const CERTIFICATE =
  /^(ERR_TLS_CERT_ALTNAME_INVALID|CERT_\w+|UNABLE_TO_\w+|DEPTH_ZERO_SELF_SIGNED_CERT|SELF_SIGNED_CERT_IN_CHAIN|INVALID_CA|HOSTNAME_MISMATCH|PATH_LENGTH_EXCEEDED|INVALID_PURPOSE)$/;
const TLS = /^(ERR_SSL_\w+|ERR_TLS_\w+|EPROTO)$/;

/**
 * The connection failure under `err`, or undefined when `err` is something else (a reset or a
 * timeout, which may pass: those stay transient). Walks at most a few causes deep.
 */
export function connectFailure(err: unknown, url: string): ConnectFailure | undefined {
  const { host, port } = hostOf(url);
  let current = err;
  for (let depth = 0; depth < 6 && current instanceof Error; depth++) {
    const code = (current as { code?: unknown }).code;
    const found = typeof code === 'string' ? byCode(code, current.message, host, url) : undefined;
    if (found) return found;
    // undici's fetch refuses the ports the Fetch standard blocks (e.g. 1, 9, 25, 6000) with this message.
    if (current.message === 'bad port') {
      return { code: 'bad port', reason: `port ${port} is one that fetch() refuses to connect to (a blocked port)`, certificate: false };
    }
    current = current.cause;
  }
  return undefined;
}

function byCode(code: string, message: string, host: string, url: string): ConnectFailure | undefined {
  switch (code) {
    case 'ECONNREFUSED':
      return { code, reason: 'the connection was refused: nothing is listening at that address (ECONNREFUSED)', certificate: false };
    case 'ENOTFOUND':
      return { code, reason: `the host name ${host} does not resolve (ENOTFOUND)`, certificate: false };
    case 'EAI_AGAIN':
      return { code, reason: `the host name ${host} could not be looked up: DNS did not answer (EAI_AGAIN)`, certificate: false };
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
      return { code, reason: `there is no network route to ${host} (${code})`, certificate: false };
  }
  if (CERTIFICATE.test(code)) {
    return { code, reason: `its TLS certificate is not trusted (${code}: ${oneLine(message)})`, certificate: true };
  }
  if (TLS.test(code)) {
    // An https:// address of a server that speaks plain HTTP fails like this.
    const plain = /wrong version number|packet length too long|http request/i.test(message) && url.startsWith('https:');
    return {
      code,
      reason: plain
        ? `the TLS handshake failed: the server there does not speak TLS (${code}), so the address may be an http:// one`
        : `the TLS handshake failed (${code}: ${oneLine(message)})`,
      certificate: false,
    };
  }
  return undefined;
}

/**
 * The whole message: what failed, why, and which setting to look at. `ANTHROPIC_BASE_URL` is
 * where the address comes from (the SDK reads it too), named with its value so the user sees at
 * once whether it is the address they meant.
 */
export function unreachableMessage(url: string, failure: ConnectFailure): string {
  const anthropic = hostOf(url).host === 'api.anthropic.com';
  const what = anthropic ? `Could not connect to the Anthropic API at ${url}` : `Could not connect to the model API at ${url}`;
  const fix = anthropic
    ? 'Check your network connection, or set ANTHROPIC_BASE_URL if you reach the API through another address.'
    : `ANTHROPIC_BASE_URL is set to ${url}: check the address and that the server is running there, or unset ANTHROPIC_BASE_URL to use the Anthropic API.`;
  const certificate = failure.certificate
    ? ' If a proxy on your network re-signs TLS traffic, set NODE_EXTRA_CA_CERTS to the file of its CA certificate.'
    : '';
  return `${what}: ${failure.reason}. ${fix}${certificate}`;
}

function hostOf(url: string): { host: string; port: string } {
  try {
    const u = new URL(url);
    return { host: u.hostname, port: u.port || (u.protocol === 'https:' ? '443' : '80') };
  } catch {
    return { host: url, port: '?' };
  }
}

function oneLine(s: string): string {
  // OpenSSL's own messages wrap the reason in codes and its source location
  // ("802C...:error:0A00010B:SSL routines:ssl3_get_record:wrong version number:../deps/...:350:").
  const openssl = /:error:[0-9A-F]+:[^:]*:[^:]*:([^:]+):/.exec(s);
  const line = (openssl?.[1] ?? s).replace(/\s+/g, ' ').trim();
  return line.length > 160 ? `${line.slice(0, 159)}…` : line;
}
