import { describe, expect, it } from 'vitest';
import { connectFailure, unreachableMessage } from './connect-failure.js';

/** What undici's fetch throws: "fetch failed", the system's error as its cause. */
function fetchFailed(message: string, code?: string): TypeError {
  return new TypeError('fetch failed', { cause: Object.assign(new Error(message), code ? { code } : {}) });
}

/** The SDK's APIConnectionError keeps fetch's error as its cause. */
function sdkWrapped(cause: Error): Error {
  return new Error('Connection error.', { cause });
}

describe('connectFailure', () => {
  it('finds the errno code a few causes deep', () => {
    const f = connectFailure(sdkWrapped(fetchFailed('connect ECONNREFUSED 127.0.0.1:1234', 'ECONNREFUSED')), 'http://127.0.0.1:1234');
    expect(f).toMatchObject({ code: 'ECONNREFUSED', certificate: false });
  });

  it('names the host that does not resolve', () => {
    const f = connectFailure(sdkWrapped(fetchFailed('getaddrinfo ENOTFOUND api.example.invalid', 'ENOTFOUND')), 'https://api.example.invalid/v1');
    expect(f?.reason).toBe('the host name api.example.invalid does not resolve (ENOTFOUND)');
  });

  it('says why a certificate was not trusted, and hints at NODE_EXTRA_CA_CERTS', () => {
    const url = 'https://gateway.example.invalid';
    for (const code of ['DEPTH_ZERO_SELF_SIGNED_CERT', 'SELF_SIGNED_CERT_IN_CHAIN', 'UNABLE_TO_GET_ISSUER_CERT_LOCALLY', 'CERT_HAS_EXPIRED', 'ERR_TLS_CERT_ALTNAME_INVALID']) {
      const f = connectFailure(sdkWrapped(fetchFailed('self-signed certificate', code)), url);
      expect(f, code).toMatchObject({ code, certificate: true });
      expect(unreachableMessage(url, f!)).toContain('set NODE_EXTRA_CA_CERTS to the file of its CA certificate');
    }
  });

  it("keeps OpenSSL's reason and drops its codes and source location", () => {
    const msg = '802C8B0CFA7F0000:error:0A000410:SSL routines:ssl3_read_bytes:sslv3 alert handshake failure:../deps/openssl/openssl/ssl/record/rec_layer_s3.c:1605:SSL alert number 40\n';
    const f = connectFailure(sdkWrapped(fetchFailed(msg, 'ERR_SSL_SSLV3_ALERT_HANDSHAKE_FAILURE')), 'https://x.invalid');
    expect(f?.reason).toBe('the TLS handshake failed (ERR_SSL_SSLV3_ALERT_HANDSHAKE_FAILURE: sslv3 alert handshake failure)');
  });

  it("explains fetch's blocked ports", () => {
    const f = connectFailure(sdkWrapped(fetchFailed('bad port')), 'http://127.0.0.1:9');
    expect(f?.reason).toBe('port 9 is one that fetch() refuses to connect to (a blocked port)');
  });

  it('leaves failures that may pass to the transient kinds: resets, closed sockets, anything unknown', () => {
    expect(connectFailure(sdkWrapped(fetchFailed('read ECONNRESET', 'ECONNRESET')), 'http://h')).toBeUndefined();
    expect(connectFailure(sdkWrapped(fetchFailed('other side closed', 'UND_ERR_SOCKET')), 'http://h')).toBeUndefined();
    expect(connectFailure(new Error('Connection error.'), 'http://h')).toBeUndefined();
  });
});

describe('unreachableMessage', () => {
  it('for the Anthropic API, points at the network and at ANTHROPIC_BASE_URL', () => {
    const f = { code: 'ENOTFOUND', reason: 'the host name api.anthropic.com does not resolve (ENOTFOUND)', certificate: false };
    expect(unreachableMessage('https://api.anthropic.com', f)).toBe(
      'Could not connect to the Anthropic API at https://api.anthropic.com: the host name api.anthropic.com does not resolve ' +
        '(ENOTFOUND). Check your network connection, or set ANTHROPIC_BASE_URL if you reach the API through another address.',
    );
  });
});
