// Order statistics for the benchmarks' printouts.

/** The p-th percentile (nearest rank, 0-100) of xs; NaN for none. */
export function pct(xs: readonly number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0 ? NaN : s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!;
}

export const median = (xs: readonly number[]) => pct(xs, 50);

/** "median 12.3 ms, p90 45.6 ms, max 78.9 ms (n=10)" */
export const stat = (xs: readonly number[]) =>
  `median ${pct(xs, 50).toFixed(1)} ms, p90 ${pct(xs, 90).toFixed(1)} ms, max ${Math.max(...xs).toFixed(1)} ms (n=${xs.length})`;
