import { Box, Text, useInput } from 'ink';

export interface CommandConfirmProps {
  command: string;
  /** What is asked (see CommandApproval.kind). */
  kind?: 'uncontained' | 'network';
  /** Who asks: "the agent", or a child thread's label. */
  from: string;
  /** Called once with the user's answer: y runs it, n (or Esc) declines. */
  onAnswer(allow: boolean): void;
  isActive: boolean;
}

/** Asks yes or no before a command runs where the sandbox can't confine it. */
export function CommandConfirm({ command, kind = 'uncontained', from, onAnswer, isActive }: CommandConfirmProps) {
  useInput(
    (input, key) => {
      if (input === 'y' || input === 'Y') onAnswer(true);
      else if (input === 'n' || input === 'N' || key.escape) onAnswer(false);
    },
    { isActive },
  );
  return (
    <Box flexDirection="column" borderStyle="round" borderColor="yellow" paddingX={1}>
      <Text color="yellow" bold>
        {kind === 'network' ? `Run it again with network? ${from} asks.` : `Run this command? ${from} asks.`}
      </Text>
      <Text>$ {command}</Text>
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
