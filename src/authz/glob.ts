/**
 * Glob match for `subjectPattern`: `*` any run of characters (slashes included, a DN is
 * one string), `?` exactly one, `\` makes the next character literal; anchored at both
 * ends. A glob, not a regular expression: DNs are full of regex metacharacters (`.`,
 * `+`, `(`) that an administrator would have to escape, and a configured regex could
 * backtrack catastrophically on a crafted DN. Greedy with one backtrack point: O(n·m).
 */

type Token = { readonly any: true } | { readonly one: true } | { readonly ch: string };

export function compileGlob(pattern: string): (s: string) => boolean {
  const tokens: Token[] = [];
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!;
    if (c === '\\' && i + 1 < pattern.length) tokens.push({ ch: pattern[++i]! });
    else if (c === '*') {
      if (!(tokens.at(-1) && 'any' in tokens.at(-1)!)) tokens.push({ any: true });
    } else if (c === '?') tokens.push({ one: true });
    else tokens.push({ ch: c });
  }
  return (s) => globMatch(tokens, s);
}

function globMatch(p: readonly Token[], s: string): boolean {
  let pi = 0;
  let si = 0;
  let starP = -1;
  let starS = 0;
  while (si < s.length) {
    const t = p[pi];
    if (t !== undefined && 'any' in t) {
      starP = pi++;
      starS = si;
    } else if (t !== undefined && ('one' in t || t.ch === s[si])) {
      pi++;
      si++;
    } else if (starP >= 0) {
      pi = starP + 1;
      si = ++starS;
    } else return false;
  }
  while (pi < p.length && 'any' in p[pi]!) pi++;
  return pi === p.length;
}
