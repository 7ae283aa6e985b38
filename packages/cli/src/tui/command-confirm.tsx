import { Box, Text, useInput } from 'ink';
import type { CommandApproval } from './controller.js';
import { terminalSafe } from '../terminal-safe.js';

export interface CommandConfirmProps {
  command: string;
  /** What is asked (see CommandApproval.kind). */
  kind?: CommandApproval['kind'];
  /** For an MCP server: which, defined where. */
  server?: CommandApproval['server'];
  /** Who asks: "the agent", or a child thread's label. */
  from: string;
  /** Called once with the user's answer: y runs it, n (or Esc) declines. */
  onAnswer: (allow: boolean) => void;
  isActive: boolean;
}

/** Asks yes or no before a command runs where the sandbox can't confine it. */
export function CommandConfirm({ command, kind = 'uncontained', server, from, onAnswer, isActive }: CommandConfirmProps) {
  useInput(
    (input, key) => {
      if (input === 'y' || input === 'Y') onAnswer(true);
      else if (input === 'n' || input === 'N' || key.escape) onAnswer(false);
    },
    { isActive },
  );
  if (kind === 'mcp-server' && server) {
    return (
      <Box flexDirection="column" borderStyle="round" borderColor="yellow" paddingX={1}>
        <Text color="yellow" bold>
          Start the MCP server "{server.name}"? This repository defines it ({server.file}).
        </Text>
        <Text>{server.transport === 'http' ? terminalSafe(command) : `$ ${terminalSafe(command)}`}</Text>
        <Text color="gray">
          {server.transport === 'http'
            ? 'The agent could send its calls to this URL, from your machine.'
            : "It would run a program on your machine, in the session's sandbox: it writes only to the agent's copy of the repository (reviewed like the agent's changes) and a private /tmp, can't see your credentials, and has the network."}{' '}
          Your answer is remembered for this definition in your config.
        </Text>
        <Text>
          <Text bold>y</Text> start it · <Text bold>n</Text> don't
        </Text>
      </Box>
    );
  }
  return (
    <Box flexDirection="column" borderStyle="round" borderColor="yellow" paddingX={1}>
      <Text color="yellow" bold>
        {kind === 'network' ? `Run it again with network? ${from} asks.` : `Run this command? ${from} asks.`}
      </Text>
      <Text>$ {terminalSafe(command)}</Text>
      <Text color="gray">
        {kind === 'network'
          ? 'It failed without network: commands have none unless you allow it. Once more, it would reach the network of your machine (still confined otherwise).'
          : "Commands can't be confined to the sandbox here: this one would reach your files, credentials and network."}
      </Text>
      <Text>
        <Text bold>y</Text> {kind === 'network' ? 'run it with network' : 'run it'} · <Text bold>n</Text> don't
      </Text>
    </Box>
  );
}
