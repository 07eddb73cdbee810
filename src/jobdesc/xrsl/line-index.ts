/**
 * Offset → line:column, for error messages. Built once per text on first use, then a
 * binary search per lookup: reporting errors for thousands of `+` operands stays linear.
 */
export class LineIndex {
  private starts: number[] | undefined;
  constructor(private readonly text: string) {}

  /** 1-based line and column (columns count UTF-16 units). */
  position(offset: number): { line: number; column: number } {
    const starts = (this.starts ??= lineStarts(this.text));
    let lo = 0;
    let hi = starts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if ((starts[mid] ?? 0) <= offset) lo = mid;
      else hi = mid - 1;
    }
    return { line: lo + 1, column: offset - (starts[lo] ?? 0) + 1 };
  }
}

function lineStarts(text: string): number[] {
  const out = [0];
  for (let i = text.indexOf('\n'); i >= 0; i = text.indexOf('\n', i + 1)) out.push(i + 1);
  return out;
}
