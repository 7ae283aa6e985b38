/**
 * Resolves when Node's event loop runs dry (`beforeExit`): no timer, socket or child process is
 * left that could ever deliver another input. Given to the runtime's whenQuiescent as `stalled`:
 * without it, a run waiting on such an input would end silently with exit code 0.
 */
export function whenLoopDrains(): { drained: Promise<void>; dispose(): void } {
  let listener: () => void = () => undefined;
  const drained = new Promise<void>((resolve) => {
    listener = () => resolve();
    process.once('beforeExit', listener);
  });
  return { drained, dispose: () => process.off('beforeExit', listener) };
}
