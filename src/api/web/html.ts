/**
 * HTML built with a tagged template that escapes every interpolated value unless it is
 * already `Html` (the result of another `html` template, or `raw` for constants). The
 * only way to put text into a page, so no job name, file name or error text a user
 * controls can become markup.
 */
export class Html {
  constructor(readonly text: string) {}
  toString(): string {
    return this.text;
  }
}

const ESC: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

export function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ESC[c] as string);
}

type Part = Html | string | number | boolean | null | undefined | readonly Part[];

function piece(v: Part): string {
  if (v === null || v === undefined || v === false) return '';
  if (v instanceof Html) return v.text;
  if (Array.isArray(v)) return (v as readonly Part[]).map(piece).join('');
  return escapeHtml(String(v));
}

export function html(strings: TemplateStringsArray, ...values: Part[]): Html {
  let out = strings[0] as string;
  for (let i = 0; i < values.length; i++) out += piece(values[i]) + (strings[i + 1] as string);
  return new Html(out);
}

/** Trusted constant markup (never user data). */
export function raw(s: string): Html {
  return new Html(s);
}
