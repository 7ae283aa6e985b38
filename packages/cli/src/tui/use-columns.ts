import { useStdout } from 'ink';
import { useEffect, useState } from 'react';

/** The terminal's width, following resizes (80 where the output says none). */
export function useColumns(): number {
  const { stdout } = useStdout();
  const [columns, setColumns] = useState(() => stdout.columns || 80);
  useEffect(() => {
    const resized = () => setColumns(stdout.columns || 80);
    stdout.on('resize', resized);
    return () => void stdout.off('resize', resized);
  }, [stdout]);
  return columns;
}
