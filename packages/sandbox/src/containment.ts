/**
 * What a sandbox's commands may reach beyond the sandbox's own view of the repository. The
 * defaults hold against a hostile command: the rest of the machine read-only, a private /tmp,
 * credential locations hidden, no network, bounded processes, memory and file size.
 */
export interface ContainmentOptions {
  /**
   * 'off' (default): only loopback, private to the sandbox. 'on': the machine's network.
   * `{ allow }`: only these domains (`example.com` also allows its subdomains), through a local
   * proxy that the commands' HTTP(S)_PROXY variables name.
   */
  network?: 'off' | 'on' | { allow: readonly string[] };
  /** Extra absolute paths commands may write (besides the sandbox and its private /tmp). */
  writable?: readonly string[];
  /** Extra absolute paths hidden from commands (besides the built-in credential locations). */
  hidden?: readonly string[];
  limits?: CommandLimits;
}

export interface CommandLimits {
  /** Processes (and threads) a command may have at once. */
  processes?: number;
  /** Memory a command may use, in bytes. */
  memoryBytes?: number;
  /** Largest file a command may write, in bytes. */
  fileSizeBytes?: number;
}
