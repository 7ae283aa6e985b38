import { Box, Text, useInput } from 'ink';

export interface CommandConfirmProps {
  command: string;
  /** Who asks: "the agent", or a child thread's label. */
  from: string;
  /** Called once with the user's answer: y runs it, n (or Esc) declines. */
  onAnswer(allow: boolean): void;
  isActive: boolean;
}

/** Asks yes or no before a command runs where the sandbox can't confine it. */
export function CommandConfirm({ command, from, onAnswer, isActive }: CommandConfirmProps) {
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
        Run this command? {from} asks.
      </Text>
      <Text>$ {command}</Text>
      <Text color="gray">
        Commands can't be confined to the sandbox here: this one would reach your files, credentials and network.
      </Text>
      <Text>
        <Text bold>y</Text> run it · <Text bold>n</Text> don't
      </Text>
    </Box>
  );
}
