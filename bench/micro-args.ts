/** Shared by the micro-benchmarks (`bench/*.bench.ts`): their numeric options and the median of their rounds. */

/** `--name N` from the command line: a positive number, else `dflt`. */
export function numberArg(name: string, dflt: number): number {
  const i = process.argv.indexOf(name);
  const v = i >= 0 ? Number(process.argv[i + 1]) : NaN;
  return Number.isFinite(v) && v > 0 ? v : dflt;
}

export function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? (s[m] ?? 0) : ((s[m - 1] ?? 0) + (s[m] ?? 0)) / 2;
}
