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

/** This process's CPU (user and system) since `start`, in µs per operation. */
export function cpuPerOperation(start: NodeJS.CpuUsage, operations: number) {
  const used = process.cpuUsage(start);
  return (used.user + used.system) / Math.max(1, operations);
}
