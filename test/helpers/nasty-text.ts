/**
 * Texts that renderers get wrong: markup and entity characters, quotes, line ends, C0
 * controls and noncharacters (dropped from XML), astral characters, the CDATA end, a
 * backslash and a JSON-special line separator. Property tests that compare two
 * renderings mix them into their random strings.
 */
import fc from 'fast-check';

export const NASTY_TEXTS: readonly string[] = [
  '',
  ' ',
  'a&b',
  '<x>',
  '"q"',
  "'",
  '\r\n\t',
  '\u0001\u001f',
  'ünï €',
  '\uFFFE',
  '😀',
  ']]>',
  '\\',
  '\u2028',
];

/** Random short strings (code units and graphemes) with the nasty ones mixed in. */
export function nastyText(...more: string[]): fc.Arbitrary<string> {
  return fc.oneof(
    fc.string({ maxLength: 8 }),
    fc.string({ unit: 'grapheme', maxLength: 4 }),
    fc.constantFrom(...NASTY_TEXTS, ...more),
  );
}
