import { describe, expect, it } from 'vitest';
import { procMaskArgs } from './proc-masks.js';

describe('procMaskArgs', () => {
  it('binds the kernel knobs read-only, covers files with /dev/null and directories with a read-only tmpfs, and skips what this kernel lacks', () => {
    const present = new Set(['/proc/sys', '/proc/sysrq-trigger', '/proc/kcore', '/proc/acpi']);
    const args = procMaskArgs((p) => present.has(p), (p) => p === '/proc/acpi' || p === '/proc/sys');
    expect(args).toEqual([
      '--ro-bind', '/proc/sys', '/proc/sys',
      '--ro-bind', '/proc/sysrq-trigger', '/proc/sysrq-trigger',
      '--ro-bind', '/dev/null', '/proc/kcore',
      '--tmpfs', '/proc/acpi', '--remount-ro', '/proc/acpi',
    ]);
  });

  it("on this machine, covers /proc/sys at least", () => {
    expect(procMaskArgs().join(' ')).toContain('--ro-bind /proc/sys /proc/sys');
  });
});
