/**
 * File-system paths in the configuration. A key whose schema carries `PATH` holds a path;
 * a relative one is taken relative to the configuration file's folder (the working
 * directory when there is no file), by `resolvePaths`, the one resolver for every such
 * key: a key added later with `PATH` is resolved like the others, and the test that walks
 * the schema (test/config/paths.test.ts) sees it. Empty strings stay empty: for some keys
 * they mean "not set" (`lrms.slurm.binDir`: found on PATH).
 */
import type { TSchema } from '@sinclair/typebox';
import { resolve } from 'node:path';

/** Schema option marking a string key as a file-system path. */
export const PATH = { path: true } as const;

/** The parts of a schema node the walks over the schema read (here, and the tests'). */
export interface Walkable {
  readonly path?: boolean;
  readonly type?: string;
  readonly properties?: Record<string, TSchema>;
  readonly items?: TSchema;
  readonly anyOf?: readonly TSchema[];
}

/** `value` with every path key of `schema` resolved against `base` (a new object; the input is not changed). */
export function resolvePaths<T>(schema: TSchema, value: T, base: string): T {
  const s = schema as Walkable;
  if (s.path === true && typeof value === 'string') return (value === '' ? value : resolve(base, value)) as T;
  if (Array.isArray(value) && s.items !== undefined)
    return (value as unknown[]).map((v) => resolvePaths(s.items!, v, base)) as T;
  if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
    let out = value as Record<string, unknown>;
    for (const variant of s.anyOf ?? []) out = resolvePaths(variant, out, base);
    if (s.properties !== undefined) {
      out = { ...out };
      for (const [k, sub] of Object.entries(s.properties)) if (k in out) out[k] = resolvePaths(sub, out[k], base);
    }
    return out as T;
  }
  return value;
}

/** Dotted names of every path key (`[]` for an array's items), for docs and tests. */
export function pathKeys(schema: TSchema, prefix = ''): string[] {
  const s = schema as Walkable;
  if (s.path === true) return [prefix];
  const out: string[] = [];
  if (s.items !== undefined) out.push(...pathKeys(s.items, `${prefix}[]`));
  for (const v of s.anyOf ?? []) out.push(...pathKeys(v, prefix));
  for (const [k, sub] of Object.entries(s.properties ?? {}))
    out.push(...pathKeys(sub, prefix === '' ? k : `${prefix}.${k}`));
  return [...new Set(out)];
}
