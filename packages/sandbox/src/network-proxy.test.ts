import { expect, it } from 'vitest';
import { hostAllowed } from './network-proxy.js';

it('a domain in the allowlist lets its subdomains through, and nothing that only ends like it', () => {
  const allow = ['registry.npmjs.org', 'github.com'];
  expect(hostAllowed('registry.npmjs.org', allow)).toBe(true);
  expect(hostAllowed('REGISTRY.npmjs.org.', allow)).toBe(true);
  expect(hostAllowed('codeload.github.com', allow)).toBe(true);
  expect(hostAllowed('evilgithub.com', allow)).toBe(false);
  expect(hostAllowed('github.com.evil.org', allow)).toBe(false);
  expect(hostAllowed('npmjs.org', allow)).toBe(false);
});
