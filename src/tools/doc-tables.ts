/**
 * Tables in docs/ generated from the code, so the documentation cannot drift:
 *  - docs/errors.md: every catalog code with status and message;
 *  - docs/configuration.md: every configuration key with type, default and meaning.
 * `npm run docs` rewrites the regions between the markers; a test fails when a
 * document is out of step (test/docs/docs-in-sync.test.ts).
 */
import { catalog } from '../errors/catalog.js';
import { ConfigSchema } from '../config/schema.js';

export const BEGIN = '<!-- BEGIN GENERATED: do not edit by hand, run `npm run docs` -->';
export const END = '<!-- END GENERATED -->';

export function errorsTable(): string {
  const rows = Object.entries(catalog).map(
    ([code, e]) => `| \`${code}\` | ${e.status} | ${e.message.replaceAll('|', '\\|')} |`,
  );
  return ['| code | HTTP status | message (reason phrase) |', '| --- | --- | --- |', ...rows].join('\n');
}

interface SchemaNode {
  type?: string;
  properties?: Record<string, SchemaNode>;
  items?: SchemaNode;
  default?: unknown;
  description?: string;
  anyOf?: SchemaNode[];
  const?: unknown;
  minimum?: number;
  pattern?: string;
}

export function configKeys(): { key: string; type: string; def: string; description: string }[] {
  const out: { key: string; type: string; def: string; description: string }[] = [];
  const walk = (node: SchemaNode, prefix: string): void => {
    for (const [k, v] of Object.entries(node.properties ?? {})) {
      const key = prefix ? `${prefix}.${k}` : k;
      if (v.type === 'object' && v.properties) {
        out.push({ key, type: 'object', def: '', description: v.description ?? '' });
        walk(v, key);
      } else if (v.type === 'array' && v.items?.type === 'object' && v.items.properties) {
        out.push({
          key,
          type: 'array of objects',
          def: v.default === undefined ? '(none)' : JSON.stringify(v.default),
          description: v.description ?? '',
        });
        walk(v.items, `${key}[]`);
      } else {
        const type = v.anyOf ? v.anyOf.map((a) => JSON.stringify(a.const)).join(' \\| ') : (v.type ?? 'any');
        out.push({
          key,
          type,
          def: v.default === undefined ? '(unset)' : JSON.stringify(v.default),
          description: v.description ?? '',
        });
      }
    }
  };
  walk(ConfigSchema, '');
  return out;
}

export function configTable(): string {
  const rows = configKeys().map(
    (k) =>
      `| \`${k.key}\` | ${k.type} | ${k.def === '' ? '' : `\`${k.def}\``} | ${k.description.replaceAll('|', '\\|')} |`,
  );
  return ['| key | type | default | meaning |', '| --- | --- | --- | --- |', ...rows].join('\n');
}

/** Replace the generated region of `doc` with `table`. */
export function withTable(doc: string, table: string): string {
  const a = doc.indexOf(BEGIN);
  const b = doc.indexOf(END);
  if (a < 0 || b < a) throw new Error('generated-region markers missing');
  return `${doc.slice(0, a + BEGIN.length)}\n${table}\n${doc.slice(b)}`;
}
