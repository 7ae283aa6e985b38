import { Text } from 'ink';
import { useEffect, useState } from 'react';

const FRAMES = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];

/** A busy indicator; `animate` off keeps frames stable (tests, screen readers, slow links). */
export function Spinner({ animate }: { animate: boolean }) {
  const [frame, setFrame] = useState(0);
  useEffect(() => {
    if (!animate) return;
    const timer = setInterval(() => setFrame((f) => (f + 1) % FRAMES.length), 100);
    return () => clearInterval(timer);
  }, [animate]);
  return <Text color="cyan">{FRAMES[frame]}</Text>;
}
