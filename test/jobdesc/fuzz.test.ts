/**
 * Property test over 100,000+ generated submission bodies (random bytes, mutations of the
 * reference cases and samples, grammar-generated xRSL): the parsers only ever return a
 * result or a parse error. Precisely, splitSubmission either throws a jobdesc CeError
 * with a 4xx status or returns items that are parsed (plain JSON data) or failed (4xx),
 * and checkAcceptance of every parsed item returns, never throws. Any other exception,
 * or a hang, fails the run; fast-check prints the seed and the shrunk input.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import * as fc from 'fast-check';
import { isCeError } from '../../src/errors/ce-error.js';
import { checkAcceptance, type AcceptanceContext } from '../../src/jobdesc/check-acceptance.js';
import { splitSubmission } from '../../src/jobdesc/split-submission.js';
import { referenceCases } from './fixtures/reference-cases.js';
import { ADL_NS, arcClientAdl, bulkAdl, diracXrsl, richAdl } from './fixtures/samples.js';

const ctx: AcceptanceContext = {
  queues: [{ name: 'main', maxWallTimeSeconds: 86400 }],
  defaultQueue: 'main',
  runtimeEnvironments: ['ENV/PROXY'],
  maxLifetimeSeconds: 86400,
};
/** Small limits so that size and count limits are reached too. */
const limits = { maxDescriptionBytes: 4096, maxItems: 8 };

let parsed = 0;
let failed = 0;
let refusedWhole = 0;

/** The invariant: a result or a parse error, nothing else. */
function check(body: Uint8Array): void {
  let r;
  try {
    r = splitSubmission(body, limits);
  } catch (e) {
    if (isCeError(e) && e.code.startsWith('CE_ERR_JOBDESC_') && e.statusCode >= 400 && e.statusCode < 500) {
      refusedWhole++;
      return;
    }
    throw e;
  }
  for (const item of r.items) {
    if (!item.ok) {
      failed++;
      assert.ok(
        item.code.startsWith('CE_ERR_JOBDESC_') && item.status > 400 && item.status < 500 && item.reason.length > 0,
        JSON.stringify(item),
      );
      continue;
    }
    parsed++;
    assert.equal(typeof item.text, 'string');
    assert.deepEqual(JSON.parse(JSON.stringify(item.description)), item.description);
    const a = checkAcceptance(item.description, ctx);
    if (!a.ok) assert.ok(a.code.startsWith('CE_ERR_JOBDESC_') && a.status > 400 && a.status < 500, JSON.stringify(a));
  }
}

const seeds: string[] = [...referenceCases.map((c) => c.body), arcClientAdl, richAdl, diracXrsl, bulkAdl(2)];

const tokens = [
  '(',
  ')',
  '"',
  "'",
  '^',
  '^#',
  '#',
  '$(',
  '$',
  '(*',
  '*)',
  '=',
  '!=',
  '<=',
  '>=',
  '&',
  '|',
  '+',
  '<',
  '>',
  '/',
  '\n',
  ' ',
  '""',
  "''",
  '<!--',
  '-->',
  ']]>',
  '<![CDATA[',
  '&amp;',
  '&#0;',
  '&#x10FFFF;',
  '&lt;',
  '<!DOCTYPE x>',
  `xmlns="${ADL_NS}"`,
  'xmlns:p="urn:x"',
  '<?xml version="1.0"?>',
  '\u0000',
  '\uFFFF',
  '\uD83D\uDE00',
  '\uFEFF',
  'é',
  '<Path>',
  '</Path>',
  '<Resources>',
  '</Resources>',
  '<ActivityDescription>',
  '</ActivityDescriptions>',
  '<SlotRequirement><NumberOfSlots>0</NumberOfSlots><SlotsPerHost>0</SlotsPerHost></SlotRequirement>',
  '<QueueName>nosuch</QueueName>',
  '(count=0)(countpernode=0)',
  '(rsl_substitution=("A" "x"))',
  '$(A)',
  '(inputfiles=("a" "b" "c"))',
  '(outputfiles=("@l" ""))',
  '(acl="<a/>")',
  '9999999999999999999',
  '-1',
  'P1Y',
  'PT',
  '@',
  'file:',
  'http://',
  'http://[',
  '..',
  '../',
  '(queue!=main)',
  '(action=cancel)',
  '+(',
  '&(',
  '__proto__',
  'constructor',
  '<OnState>constructor</OnState>',
];

type Mutation = { kind: 0 | 1 | 2 | 3; pos: number; len: number; token: string };

const mutation: fc.Arbitrary<Mutation> = fc.record({
  kind: fc.constantFrom<0 | 1 | 2 | 3>(0, 1, 2, 3),
  pos: fc.nat(),
  len: fc.nat({ max: 40 }),
  token: fc.oneof(
    { weight: 4, arbitrary: fc.constantFrom(...tokens) },
    { weight: 1, arbitrary: fc.string({ maxLength: 6, unit: 'binary' }) },
  ),
});

function mutate(seed: string, ms: Mutation[]): string {
  let s = seed;
  for (const m of ms) {
    const p = s.length === 0 ? 0 : m.pos % (s.length + 1);
    if (m.kind === 0) s = s.slice(0, p) + m.token + s.slice(p);
    else if (m.kind === 1) s = s.slice(0, p) + s.slice(p + m.len);
    else if (m.kind === 2) s = s.slice(0, p) + s.slice(p, p + m.len) + s.slice(p);
    else s = s.slice(0, p) + m.token + s.slice(p + m.len);
  }
  return s;
}

// Grammar-generated xRSL: every attribute, every operator, strings, variables, sequences.
const attribute = fc.constantFrom(
  'executable',
  'arguments',
  'stdin',
  'stdout',
  'stderr',
  'join',
  'inputfiles',
  'outputfiles',
  'executables',
  'cache',
  'delegationid',
  'queue',
  'starttime',
  'lifetime',
  'cputime',
  'walltime',
  'gridtime',
  'benchmarks',
  'memory',
  'disk',
  'runtimeenvironment',
  'gmlog',
  'jobname',
  'ftpthreads',
  'acl',
  'notify',
  'rerun',
  'priority',
  'dryrun',
  'environment',
  'count',
  'countpernode',
  'exclusiveexecution',
  'jobreport',
  'credentialserver',
  'rsl_substitution',
  'action',
  'CPU_Time',
  'nodeaccess',
  'unknown',
  'constructor',
  '__proto__',
  'toString',
);
const relop = fc.constantFrom('=', '=', '=', '!=', '<', '>', '<=', '>=');
const word = fc.oneof(
  fc.constantFrom(
    'main',
    '/bin/true',
    '10',
    '0',
    '4',
    '1h30',
    'yes',
    'no',
    'a@b.c',
    'be a@b.c',
    'https://h/f',
    '',
    'ENV/PROXY',
    '1:30',
    '@list',
    '..',
    '2030-01-01',
    'A',
    '1024.cksum',
    'location=https://h/r',
    'threads=2',
    '<acl><Content>x</Content></acl>',
  ),
  fc.string({ maxLength: 8 }),
);
const quote = (s: string): string => `"${s.replaceAll('"', '""')}"`;
const { value } = fc.letrec<{ value: string }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    word.map(quote),
    fc.constantFrom('$(A)', '$(B)', 'plain', 'x#y', "'s'", '^%u%'),
    fc.array(tie('value'), { maxLength: 4 }).map((vs) => `(${vs.join(' ')})`),
  ),
}));
const relation = fc
  .tuple(attribute, relop, fc.array(value, { maxLength: 4 }))
  .map(([a, o, vs]) => `(${a}${o}${vs.join(' ')})`);
const request = fc
  .tuple(fc.array(relation, { minLength: 1, maxLength: 8 }), fc.option(fc.tuple(relation, relation)))
  .map(([rels, alt]) => `&${rels.join('')}${alt ? `(|${alt[0]}${alt[1]})` : ''}`);
const xrslBody = fc.oneof(
  request,
  fc.array(request, { minLength: 1, maxLength: 4 }).map((rs) => `+${rs.map((r) => `(${r})`).join('')}`),
);

const enc = (s: string): Buffer => Buffer.from(s, 'utf8');

describe('fuzz: parsers return a result or a parse error, nothing else', { timeout: 300_000 }, () => {
  it('random bytes behind each kind of first character (30,000 inputs)', () => {
    const prefixes = ['&', '+', '<', '(*x*)&', '', ' ', '\uFEFF', `<ActivityDescription xmlns="${ADL_NS}">`, '&('];
    fc.assert(
      fc.property(fc.constantFrom(...prefixes), fc.uint8Array({ maxLength: 200 }), (prefix, bytes) =>
        check(Buffer.concat([enc(prefix), bytes])),
      ),
      { numRuns: 30_000 },
    );
  });

  it('random Unicode text behind each kind of first character (10,000 inputs)', () => {
    fc.assert(
      fc.property(fc.constantFrom('&', '+', '<'), fc.string({ maxLength: 120, unit: 'binary' }), (prefix, text) =>
        check(enc(prefix + text)),
      ),
      { numRuns: 10_000 },
    );
  });

  it('mutations of the 44 reference cases and the samples (45,000 inputs)', () => {
    fc.assert(
      fc.property(fc.constantFrom(...seeds), fc.array(mutation, { minLength: 1, maxLength: 8 }), (seed, ms) =>
        check(enc(mutate(seed, ms))),
      ),
      { numRuns: 45_000 },
    );
  });

  it('grammar-generated xRSL using every attribute and operator (20,000 inputs)', () => {
    fc.assert(
      fc.property(xrslBody, (body) => check(enc(body))),
      { numRuns: 20_000 },
    );
  });

  it('exercised all three outcomes', () => {
    // Guards the generators: a fuzz run that only ever hits one branch proves little.
    assert.ok(parsed > 1000, `parsed ${parsed}`);
    assert.ok(failed > 1000, `failed ${failed}`);
    assert.ok(refusedWhole > 1000, `refused ${refusedWhole}`);
  });
});
