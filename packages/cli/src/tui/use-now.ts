import { useEffect, useState } from 'react';

/**
 * The time (epoch ms), moving on every `everyMs` while `ticking`: for "running for 12s". The
 * timer lives only while the component that shows a running thing is mounted and ticking.
 */
export function useNow(ticking: boolean, everyMs = 1000): number {
  const [now, setNow] = useState(Date.now);
  useEffect(() => {
    if (!ticking) return;
    setNow(Date.now());
    const timer = setInterval(() => setNow(Date.now()), everyMs);
    return () => clearInterval(timer);
  }, [ticking, everyMs]);
  return ticking ? now : Date.now();
}
