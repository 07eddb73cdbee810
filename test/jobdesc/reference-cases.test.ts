/**
 * The 44 reference cases of the job descriptions (§6), table-driven through the
 * whole submission path: splitSubmission, then checkAcceptance against the reference
 * server (one queue `main`, default and open to everybody).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isCeError } from '../../src/errors/ce-error.js';
import { checkAcceptance, type AcceptanceContext } from '../../src/jobdesc/check-acceptance.js';
import { splitSubmission } from '../../src/jobdesc/split-submission.js';
import { referenceCases } from './fixtures/reference-cases.js';

function context(extra: { requestDelegationId?: string; runtimeEnvironments?: string[] } = {}): AcceptanceContext {
  return {
    queues: [{ name: 'main' }],
    defaultQueue: 'main',
    runtimeEnvironments: extra.runtimeEnvironments ?? [],
    ...(extra.requestDelegationId ? { requestDelegationId: extra.requestDelegationId } : {}),
  };
}

describe('reference cases (job descriptions §6)', () => {
  it('covers all 44 numbered cases', () => {
    const numbers = new Set(referenceCases.map((c) => Math.floor(c.n)));
    for (let n = 1; n <= 44; n++) assert.ok(numbers.has(n), `case ${n} missing`);
  });

  for (const c of referenceCases) {
    it(`${c.n}: ${c.title}${c.differs ? ` (differs: ${c.differs})` : ''}`, () => {
      const body = Buffer.from(c.body, 'utf8');
      if (c.whole) {
        assert.throws(
          () => splitSubmission(body),
          (e: unknown) =>
            isCeError(e) &&
            e.code === c.whole?.code &&
            e.message === c.whole.message &&
            e.statusCode >= 400 &&
            e.statusCode < 500,
        );
        return;
      }
      const r = splitSubmission(body);
      if (c.multi !== undefined) assert.equal(r.multi, c.multi, 'multi');
      const expected = c.items ?? [];
      assert.equal(r.items.length, expected.length, 'item count');
      expected.forEach((exp, i) => {
        const item = r.items[i];
        assert.ok(item, `item ${i}`);
        if ('parseFailure' in exp) {
          assert.equal(item.ok, false, `item ${i} should fail to parse`);
          if (item.ok) return;
          assert.equal(item.code, exp.parseFailure);
          assert.ok(item.status > 400 && item.status < 500, `status ${item.status}`);
          if (exp.exact) assert.equal(item.reason, exp.reason);
          else
            assert.ok(
              item.reason.startsWith(exp.reason),
              `reason ${JSON.stringify(item.reason)} should start with ${JSON.stringify(exp.reason)}`,
            );
          return;
        }
        assert.equal(item.ok, true, `item ${i} should parse: ${item.ok ? '' : item.reason}`);
        if (!item.ok) return;
        const a = checkAcceptance(item.description, context(c.ctx));
        if ('refused' in exp) {
          assert.equal(a.ok, false, `item ${i} should be refused`);
          if (a.ok) return;
          assert.equal(a.code, exp.refused);
          assert.equal(a.reason, exp.reason);
          assert.ok(a.status > 400 && a.status < 500, `status ${a.status}`);
          return;
        }
        assert.equal(a.ok, true, `item ${i} should be accepted: ${a.ok ? '' : a.reason}`);
        if (!a.ok) return;
        assert.equal(a.description.queue, 'main');
        exp.check?.(a.description);
      });
    });
  }
});
