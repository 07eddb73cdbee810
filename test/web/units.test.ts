/** The web interface's pieces without a browser: escaping, request tokens, keyset pages at 100,000 jobs. */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { html, raw } from '../../src/api/web/html.js';
import { CsrfTokens } from '../../src/api/web/csrf.js';
import { openDatabase } from '../../src/store/database.js';
import { JobPages } from '../../src/store/job-pages.js';

describe('html template', () => {
  it('escapes every interpolated value, nested templates and raw constants pass through', () => {
    const name = `<img src=x onerror="alert(1)">&'`;
    const tag = html; // (not named `html`: a formatter would reflow the markup under test)
    const h = tag`<p title="${name}">${name}${tag`<b>${name}</b>`}${raw('<br>')}${[name, 1]}${null}${undefined}${false}</p>`;
    assert.equal(
      h.text,
      '<p title="&lt;img src=x onerror=&quot;alert(1)&quot;&gt;&amp;&#39;">&lt;img src=x onerror=&quot;alert(1)&quot;&gt;&amp;&#39;<b>&lt;img src=x onerror=&quot;alert(1)&quot;&gt;&amp;&#39;</b><br>&lt;img src=x onerror=&quot;alert(1)&quot;&gt;&amp;&#39;1</p>',
    );
  });
});

describe('request tokens', () => {
  const dn = '/O=Grid/CN=alice';
  it('accepts its own token for the same identity only', () => {
    const t = new CsrfTokens(3600);
    assert.equal(t.check(dn, t.issue(dn)), 'ok');
    assert.equal(t.check('/O=Grid/CN=bob', t.issue(dn)), 'invalid');
    assert.equal(new CsrfTokens(3600).check(dn, t.issue(dn)), 'invalid', 'another secret (a restarted service)');
  });
  it('refuses missing, malformed, tampered and expired tokens', () => {
    let now = 1_700_000_000_000;
    const t = new CsrfTokens(3600, undefined, () => now);
    const tok = t.issue(dn);
    assert.equal(t.check(dn, undefined), 'missing');
    assert.equal(t.check(dn, ''), 'missing');
    assert.equal(t.check(dn, 'x'), 'invalid');
    assert.equal(t.check(dn, `${Number(tok.split('.')[0]) + 1}.${tok.split('.')[1]}`), 'invalid', 'time changed');
    now += 3601_000;
    assert.equal(t.check(dn, tok), 'expired');
  });
});

describe('job pages (keyset)', () => {
  it('pages 100,000 jobs newest first without gaps, any page as fast as the first', () => {
    const dir = mkdtempSync(join(tmpdir(), 'ceres-webpages-'));
    try {
      const db = openDatabase(join(dir, 'ceres.db'));
      const ins = db.prepare(
        `INSERT INTO jobs (id, owner, state, rest_state, queue, format, description, raw, created_at, updated_at) VALUES (?, ?, 'FINISHED', ?, 'main', 'xrsl', '{}', '', ?, 0)`,
      );
      db.transaction(() => {
        for (let i = 0; i < 100_000; i++)
          ins.run(
            `j${String(i).padStart(6, '0')}`,
            'alice',
            i % 10 === 0 ? 'FAILED' : 'FINISHED',
            1_000_000 + Math.floor(i / 3),
          );
        for (let i = 0; i < 1000; i++) ins.run(`k${i}`, 'bob', 'FINISHED', 5_000_000);
        // The owner as shown (the administrator's list) is the one-line form, kept beside the key.
        db.exec('UPDATE jobs SET owner_dn = owner');
      })();
      const pages = new JobPages(db);
      const first = pages.page('alice', undefined, undefined, 50);
      assert.equal(first[0]?.id, 'j099999');
      // Walk 40 pages deep, then time a page near the end against the first.
      let after: { createdAt: number; id: string } | undefined;
      const seen = new Set<string>();
      for (let p = 0; p < 40; p++) {
        const rows = pages.page('alice', undefined, after, 50);
        for (const r of rows) seen.add(r.id);
        const last = rows[rows.length - 1]!;
        after = { createdAt: last.createdAt, id: last.id };
      }
      assert.equal(seen.size, 2000, 'no row twice, none skipped (equal times broken by id)');
      const t = (key: typeof after) => {
        const s = process.hrtime.bigint();
        for (let i = 0; i < 20; i++) pages.page('alice', 'FAILED', key, 50);
        return Number(process.hrtime.bigint() - s) / 20 / 1e6;
      };
      const firstMs = t(undefined);
      const deepMs = t({ createdAt: 1_000_100, id: 'j000300' });
      assert.ok(
        deepMs < Math.max(25, firstMs * 10),
        `a deep page took ${deepMs.toFixed(2)} ms, the first ${firstMs.toFixed(2)} ms`,
      );
      assert.ok(pages.page('alice', 'FAILED', undefined, 50).every((r) => r.state === 'FAILED'));
      assert.deepEqual(pages.page('bob', 'FAILED', undefined, 50), []);
      assert.deepEqual(
        new Map(pages.countsOf('alice').map((c) => [c.state, c.n])),
        new Map([
          ['FAILED', 10_000],
          ['FINISHED', 90_000],
        ]),
      );
      const plan = db
        .prepare(
          `EXPLAIN QUERY PLAN SELECT id FROM jobs INDEXED BY jobs_owner_created WHERE owner = 'alice' ORDER BY created_at DESC, id DESC LIMIT 50`,
        )
        .all() as { detail: string }[];
      assert.ok(!plan.some((p) => /TEMP B-TREE/.test(p.detail)), 'ordered by the index, no sort');
      console.log(`# page of 50 at 100,000 jobs: first ${firstMs.toFixed(2)} ms, deep ${deepMs.toFixed(2)} ms`);
      // The administrator's list: every owner's jobs, newest first, with owners, on the
      // index (created_at, id) of migration 9; its times are reported, not asserted.
      const all = pages.pageAll(undefined, undefined, 50);
      assert.deepEqual(
        all.slice(0, 3).map((r) => r.owner),
        ['bob', 'bob', 'bob'],
      );
      let key: { createdAt: number; id: string } | undefined;
      const seenAll = new Set<string>();
      for (let p = 0; p < 40; p++) {
        const rows = pages.pageAll(undefined, key, 50);
        for (const r of rows) seenAll.add(r.id);
        const last = rows[rows.length - 1]!;
        key = { createdAt: last.createdAt, id: last.id };
      }
      assert.equal(seenAll.size, 2000, 'no row twice, none skipped');
      assert.ok([...seenAll].some((id) => id.startsWith('j')) && [...seenAll].some((id) => id.startsWith('k')));
      const ta = (k: typeof key, state?: string) => {
        const s = process.hrtime.bigint();
        for (let i = 0; i < 10; i++) pages.pageAll(state, k, 50);
        return Number(process.hrtime.bigint() - s) / 10 / 1e6;
      };
      console.log(
        `# administrator's page of 50 at 101,000 jobs: first ${ta(undefined).toFixed(2)} ms, deep ${ta({ createdAt: 1_000_100, id: 'j000300' }).toFixed(2)} ms, filtered ${ta(undefined, 'FAILED').toFixed(2)} ms`,
      );
      db.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
