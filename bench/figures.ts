// How the headless bench's cases summarise their runs.
export const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
export const fmt = (x: number): string => x.toFixed(0);
