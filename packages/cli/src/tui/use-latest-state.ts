import { useCallback, useRef, useState } from 'react';

/**
 * State whose latest value input handlers can read synchronously. Ink may deliver several keys
 * of one stdin chunk (a paste, fast typing) before React re-subscribes the handler, so a handler
 * closing over rendered state would see stale values and drop keys.
 */
export function useLatestState<T>(initial: T | (() => T)): [get: () => T, update: (f: (prev: T) => T) => T] {
  const [state, setState] = useState(initial);
  const ref = useRef(state);
  const get = useCallback(() => ref.current, []);
  const update = useCallback((f: (prev: T) => T) => {
    const next = f(ref.current);
    ref.current = next;
    setState(next);
    return next;
  }, []);
  return [get, update];
}
