// Queues per authorization group: the item names a queue the caller may not use (403,
// A-REX's reason), or names none and gets the default queue when the caller may use it,
// else the first one it may use, else a 403 for having none.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { descriptionPort } from '../../src/jobs/description-port.js';
import { buildConfig } from '../../src/config/load.js';

const AUTHZ = { groups: [{ name: 'a', match: [{ all: true }] }], allow: ['a'] };

function accept(cluster: Record<string, unknown>, xrsl: string, authorisedQueues?: string[]) {
  const port = descriptionPort(buildConfig({ authorization: AUTHZ, cluster }));
  const [item] = port.split(Buffer.from(xrsl)).items;
  assert.ok(item?.ok);
  return port.accept(item.description, authorisedQueues === undefined ? {} : { authorisedQueues });
}
const queueOf = (r: ReturnType<typeof accept>): string | undefined =>
  r.ok ? r.description.queue : `${r.status} ${r.reason}`;

describe('queues the caller may use', () => {
  const queues = [{ name: 'main', allow: ['a'] }, { name: 'pilot' }, { name: 'prod' }];
  it('a named queue outside the allowed ones fails the item with 403', () => {
    assert.equal(
      queueOf(accept({ queues }, '&(executable=/bin/true)(queue=prod)', ['main', 'pilot'])),
      "403 Requested queue prod does not match any of available queues: queue prod is open to the authorization groups none, and the caller's groups are none; " +
        "submit to a queue the caller may use (main, pilot), or ask the site to add one of the caller's groups to the queue's allow list",
    );
    assert.equal(queueOf(accept({ queues }, '&(executable=/bin/true)(queue=pilot)', ['main', 'pilot'])), 'pilot');
  });
  it('no queue named: the default when allowed, else the first allowed, else 403', () => {
    assert.equal(queueOf(accept({ queues }, '&(executable=/bin/true)', ['main', 'pilot'])), 'main');
    assert.equal(queueOf(accept({ queues }, '&(executable=/bin/true)', ['pilot', 'prod'])), 'pilot');
    assert.equal(
      queueOf(accept({ queues, defaultQueue: 'prod' }, '&(executable=/bin/true)', ['pilot', 'prod'])),
      'prod',
    );
    assert.equal(queueOf(accept({ queues, defaultQueue: 'prod' }, '&(executable=/bin/true)', ['main'])), 'main');
    assert.match(queueOf(accept({ queues }, '&(executable=/bin/true)', []))!, /^403 /);
  });
  it('without a queue restriction: the configured default, as before', () => {
    assert.equal(queueOf(accept({ queues, defaultQueue: 'prod' }, '&(executable=/bin/true)')), 'prod');
    assert.equal(queueOf(accept({ queues }, '&(executable=/bin/true)')), 'main');
  });
});
