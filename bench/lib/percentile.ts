/** Nearest-rank percentile of |values| (NaN when empty), for the client-accuracy benchmarks. */
export function absPct(values: readonly number[], p: number): number {
  const a = Float64Array.from(values, Math.abs).sort()
  return a.length === 0 ? NaN : (a[Math.min(a.length - 1, Math.max(0, Math.ceil((p / 100) * a.length) - 1))] as number)
}
