/**
 * Kubernetes resource quantities (`status.allocatable`, `resources.requests`) as numbers: a
 * decimal number with an optional suffix, binary (`Ki` .. `Ei`), decimal SI (`n`, `u`, `m`,
 * `k`, `M` .. `E`) or an exponent (`1e9`, `1E3`), as the API reference's Quantity type
 * describes it. `4`, `3920m` CPUs; `16318376Ki`, `64G`, `1e9` bytes.
 */
const BINARY: Readonly<Record<string, number>> = {
  Ki: 2 ** 10,
  Mi: 2 ** 20,
  Gi: 2 ** 30,
  Ti: 2 ** 40,
  Pi: 2 ** 50,
  Ei: 2 ** 60,
};
const DECIMAL: Readonly<Record<string, number>> = {
  n: 1e-9,
  u: 1e-6,
  m: 1e-3,
  '': 1,
  k: 1e3,
  M: 1e6,
  G: 1e9,
  T: 1e12,
  P: 1e15,
  E: 1e18,
};

/** The quantity's value, or undefined when the text is not a quantity (never NaN). */
export function parseQuantity(text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const m = /^([+-]?(?:\d+(?:\.\d*)?|\.\d+))(Ki|Mi|Gi|Ti|Pi|Ei|[eE][+-]?\d+|[numkMGTPE]?)$/.exec(text.trim());
  if (!m) return undefined;
  const n = Number(m[1]);
  const suffix = m[2] ?? '';
  const factor = BINARY[suffix] ?? DECIMAL[suffix] ?? 10 ** Number(suffix.slice(1));
  const v = n * factor;
  return Number.isFinite(v) ? v : undefined;
}
