// A loop's one result line: its rate over its duration (set or timed), latency percentiles, and errors.
export function summary(latencies: number[], errors: number, duration: number) {
  const sorted = [...latencies].sort((a, b) => a - b);
  return {
    rate: sorted.length / duration,
    p50: sorted[Math.floor(sorted.length * 0.5)],
    p99: sorted[Math.floor(sorted.length * 0.99)],
    errors,
    total: sorted.length + errors,
  };
}
