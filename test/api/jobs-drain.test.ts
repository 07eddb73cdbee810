// Drains in a bulk submission: each item of a drained queue gets its own 503, the others
// are created, and the drain table is read once per queue and request, not once per item.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { jobsFixture } from './jobs-fixture.js';

test('a bulk POST reads each queue drain once and refuses only the drained queue, per item', async () => {
  const asked: (string | undefined)[] = [];
  let drained: string | undefined = 'long';
  const f = await jobsFixture({
    draining: (queue) => {
      asked.push(queue);
      return queue !== undefined && queue === drained ? `queue ${queue} is draining` : undefined;
    },
  });
  try {
    const job = (q: string) => `(&(executable="/bin/true")(queue="${q}"))`;
    const body = `+${job('main')}${job('long')}${job('main')}${job('long')}${job('main')}`;
    const r = await f.submit(body);
    assert.equal(r.statusCode, 201);
    const items = r.json<{ job: { 'status-code': string; reason: string }[] }>().job;
    assert.deepEqual(
      items.map((it) => it['status-code']),
      ['201', '503', '201', '503', '201'],
    );
    assert.equal(items[1]?.reason, 'queue long is draining');
    assert.deepEqual(asked, [undefined, 'main', 'long'], 'the service once, then each queue once');

    // A drain applies to the next request: the same body is now accepted in full.
    drained = undefined;
    asked.length = 0;
    const again = (await f.submit(body)).json<{ job: { 'status-code': string }[] }>();
    assert.deepEqual(
      again.job.map((it) => it['status-code']),
      ['201', '201', '201', '201', '201'],
    );
    assert.equal(asked.length, 3);
  } finally {
    await f.close();
  }
});
