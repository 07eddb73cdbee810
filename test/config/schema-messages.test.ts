// A value the schema's pattern refuses is said in words: `expected an FQAN, starting with /
// ..., got "atlas"`, not `Expected string to match '^/[^/]'`. The words come from the schema
// (an `errorMessage` beside each pattern, src/config/patterns.ts), so every pattern must
// have them: the walk below fails on one without.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { TSchema } from '@sinclair/typebox';
import { ConfigSchema } from '../../src/config/schema.js';
import type { Walkable } from '../../src/config/paths.js';
import { configRefusal } from '../helpers/config-refusal.js';

interface Node extends Walkable {
  readonly pattern?: string;
  readonly errorMessage?: string;
}

/** Dotted keys of schemas with a pattern and no words; a union holding one needs its own words. */
function unworded(schema: TSchema, key = ''): string[] {
  const s = schema as Node;
  const out: string[] = [];
  if (s.pattern !== undefined && typeof s.errorMessage !== 'string') out.push(key);
  if (s.anyOf?.some((v) => (v as Node).pattern !== undefined) && typeof s.errorMessage !== 'string') out.push(key);
  if (s.items !== undefined) out.push(...unworded(s.items, `${key}[]`));
  for (const v of s.anyOf ?? []) out.push(...unworded(v, key));
  for (const [k, sub] of Object.entries(s.properties ?? {})) out.push(...unworded(sub, key === '' ? k : `${key}.${k}`));
  return out;
}

describe('config schema errors in words', () => {
  it('every pattern of the schema says what it expects', () => {
    assert.deepEqual(unworded(ConfigSchema), []);
  });

  it('a VOMS rule that is not an FQAN', () => {
    const e = configRefusal({ authorization: { groups: [{ name: 'a', match: [{ voms: 'atlas' }] }], allow: ['a'] } });
    assert.equal(e.key, 'authorization.groups.0.match.0.voms');
    assert.match(e.message, /: expected an FQAN, starting with \/ \(e\.g\. \/atlas.*\), got "atlas"$/);
    assert.doesNotMatch(e.message, /Expected string to match/);
  });

  it('a listen address, a queue name, an account name and a disk mark, each with the value given', () => {
    assert.match(configRefusal({ listen: 'nowhere' }).message, /'listen': expected HOST:PORT, .* got "nowhere"$/);
    assert.match(
      configRefusal({ cluster: { queues: [{ name: 'a b' }] } }).message,
      /'cluster\.queues\.0\.name': expected a name of 1 to 64 letters, digits, \., _ or -, got "a b"$/,
    );
    assert.match(
      configRefusal({ accounts: { default: 'Bad Name' } }).message,
      /'accounts\.default': expected a local account name: .*, got "Bad Name"$/,
    );
    assert.match(
      configRefusal({ disk: { sessionsLowWater: '5 percent' } }).message,
      /'disk\.sessionsLowWater': expected bytes \(an integer\) or a percentage such as "5%", got "5 percent"$/,
    );
  });

  it('a long value is cut; a key without words keeps the validator message', () => {
    const long = configRefusal({ listen: 'x'.repeat(300) }).message;
    assert.match(long, /got "x{76}\.\.\.$/);
    assert.match(configRefusal({ accounts: { minUid: 'x' } }).message, /'accounts\.minUid': Expected integer$/);
  });
});
