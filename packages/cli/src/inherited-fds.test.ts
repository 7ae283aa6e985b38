import { describe, expect, it } from 'vitest';
import { namedDescriptors } from './inherited-fds.js';

describe('descriptors the command line names', () => {
  it('are the /dev/fd/N and /proc/self/fd/N an argument holds (process substitution, -p @file), and no others', () => {
    expect(namedDescriptors(['-p', '@/dev/fd/63', '--mcp-config', '/proc/self/fd/12', '--mcp-config=/dev/fd/40'])).toEqual([63, 12, 40]);
    expect(namedDescriptors(['-p', 'read /proc/1/fd/3 and /dev/fdx/4', '--mcp-config', 'fd/5.json'])).toEqual([]);
  });
});
