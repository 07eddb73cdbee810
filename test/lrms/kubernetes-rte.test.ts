// Runtime environments on a Kubernetes site: an RTE selects the pod's image (and environment)
// from the configuration; one without an image, or two needing different images, are refused
// at submission with a 422 naming them; a job never names an image itself, and the RTE's name
// never enters the manifest. Published as ApplicationEnvironments only when they have an image.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FakeKubeApi } from '../helpers/fake-kube-api.js';
import { kubeBackend, kubeconfigFor, kubeSpec } from './kubernetes-fixture.js';
import { descriptionPort } from '../../src/jobs/description-port.js';
import { buildConfig } from '../../src/config/load.js';
import { chooseRteImage } from '../../src/lrms/kubernetes/rte-images.js';
import { isCeError } from '../../src/errors/ce-error.js';
import { createInfoSource } from '../../src/info/info-source.js';
import { openDatabase } from '../../src/store/database.js';
import { JobStore } from '../../src/store/job-store.js';
import { elementText, findElement } from '../helpers/xml-find.js';
import type { XmlElement } from '../../src/doc/element.js';

const IMAGES = {
  'APPS/A-1.0': { image: 'registry.example.org/a:1.0', env: { A_HOME: '/opt/a' } },
  'APPS/C': { image: 'registry.example.org/c:2', env: {} },
  'ENV/C-TOO': { image: 'registry.example.org/c:2', env: { C_TOO: 'yes' } },
};
const CLUSTER = {
  runtimeEnvironments: [{ name: 'APPS/A-1.0' }, { name: 'APPS/B-2.0' }, { name: 'APPS/C' }, { name: 'ENV/C-TOO' }],
};
const config = (backend: 'kubernetes' | 'fork') =>
  buildConfig({
    cluster: CLUSTER,
    lrms: { backend, kubernetes: { volume: { mountPath: '/tmp' }, runtimeEnvironments: IMAGES } },
  });

function accept(rtes: string[], optional: string[] = [], backend: 'kubernetes' | 'fork' = 'kubernetes') {
  const port = descriptionPort(config(backend));
  const [item] = port.split(Buffer.from('&(executable=/bin/true)')).items;
  assert.ok(item?.ok);
  const description = {
    ...item.description,
    runtimeEnvironments: [
      ...rtes.map((name) => ({ name, options: [] })),
      ...optional.map((name) => ({ name, options: [], optional: true })),
    ],
  };
  return port.accept(description, {});
}

describe('kubernetes runtime environments at submission', () => {
  it('an RTE with an image is accepted, as are RTEs sharing one image', () => {
    const one = accept(['APPS/A-1.0']);
    assert.ok(one.ok);
    assert.deepEqual(
      one.description.runtimeEnvironments.map((r) => r.name),
      ['APPS/A-1.0'],
    );
    assert.ok(accept(['APPS/C', 'ENV/C-TOO']).ok);
  });

  it('an enabled RTE without an image is refused with 422 naming it', () => {
    const r = accept(['APPS/A-1.0', 'APPS/B-2.0']);
    assert.ok(!r.ok);
    assert.equal(r.status, 422);
    assert.match(r.reason, /APPS\/B-2\.0 has no container image on this Kubernetes site/);
  });

  it('RTEs that need two images are refused with 422 naming both', () => {
    const r = accept(['APPS/A-1.0', 'APPS/C']);
    assert.ok(!r.ok);
    assert.equal(r.status, 422);
    assert.match(r.reason, /APPS\/A-1\.0 and APPS\/C need different container images/);
  });

  it('an optional RTE without an image is dropped, not refused', () => {
    const r = accept(['APPS/A-1.0'], ['APPS/B-2.0']);
    assert.ok(r.ok);
    assert.deepEqual(
      r.description.runtimeEnvironments.map((x) => x.name),
      ['APPS/A-1.0'],
    );
  });

  it('an RTE the site does not enable stays refused as unknown, whatever it holds', () => {
    const r = accept([`APPS/X'; image: evil`]);
    assert.ok(!r.ok);
    assert.equal(r.status, 422);
    assert.match(r.reason, /missing, broken or not enabled/);
  });

  it('on another backend an RTE needs no image', () => {
    assert.ok(accept(['APPS/B-2.0'], [], 'fork').ok);
  });

  it('only own entries of the map count: __proto__ and constructor are no RTE', () => {
    for (const name of ['__proto__', 'constructor', 'toString'])
      assert.deepEqual(chooseRteImage(IMAGES, [name]), { ok: false, problem: 'no-image', names: [name] });
    assert.deepEqual(chooseRteImage(IMAGES, []), { ok: true });
  });
});

describe('kubernetes runtime environments in the pod', () => {
  let fake: FakeKubeApi;
  let dir = '';
  let kubeconfig = '';
  before(async () => {
    fake = await FakeKubeApi.start();
    dir = await mkdtemp(join(tmpdir(), 'ceres-kube-rte-'));
    kubeconfig = await kubeconfigFor(fake, dir);
  });
  after(async () => {
    await fake.close();
    await rm(dir, { recursive: true, force: true });
  });

  it("the RTE's image wins over the queue's, its environment comes before the job's, and its name is not in the Job", async (t) => {
    const b = await kubeBackend(kubeconfig, join(dir, 'work'), {
      runtimeEnvironments: IMAGES,
      images: { main: 'registry.example.org/main:1' },
    });
    t.after(() => b.close());
    const spec = await kubeSpec(dir, 'krte1', 'true', {
      queue: 'main',
      runtimeEnvironmentNames: ['APPS/A-1.0'],
      environment: [{ name: 'A_HOME', value: '/job/wins' }],
    });
    const name = await b.submit(spec);
    const job = fake.jobs().find((j) => j.metadata?.name === name);
    const c = job?.spec?.template.spec?.containers[0];
    assert.equal(c?.image, 'registry.example.org/a:1.0');
    assert.deepEqual(c?.env, [
      { name: 'A_HOME', value: '/opt/a' },
      { name: 'A_HOME', value: '/job/wins' },
    ]);
    assert.ok(!JSON.stringify(job).includes('APPS/A'), 'the RTE name is not in the manifest');
    const plain = await b.submit(await kubeSpec(dir, 'krte2', 'true', { queue: 'main' }));
    assert.equal(
      fake.jobs().find((j) => j.metadata?.name === plain)?.spec?.template.spec?.containers[0]?.image,
      'registry.example.org/main:1',
    );
  });

  it('a spec naming an RTE without an image (the configuration reloaded since) is refused and no Job made', async (t) => {
    const b = await kubeBackend(kubeconfig, join(dir, 'work'), { runtimeEnvironments: IMAGES });
    t.after(() => b.close());
    const before = fake.jobs().length;
    await assert.rejects(
      b.submit(await kubeSpec(dir, 'krte3', 'true', { runtimeEnvironmentNames: ['APPS/B-2.0'] })),
      (e: unknown) => isCeError(e) && e.code === 'CE_ERR_LRMS_SUBMIT_FAILED' && /APPS\/B-2\.0/.test(e.message),
    );
    assert.equal(fake.jobs().length, before);
  });
});

describe('kubernetes runtime environments in the info document', () => {
  it('publishes as ApplicationEnvironments only the RTEs with an image', async (t) => {
    const sdir = await mkdtemp(join(tmpdir(), 'ceres-kube-rte-info-'));
    const db = openDatabase(join(sdir, 'db'));
    t.after(async () => {
      db.close();
      await rm(sdir, { recursive: true, force: true });
    });
    const source = createInfoSource({
      config: config('kubernetes'),
      store: new JobStore(db),
      endpointUrl: () => 'https://ce.example.org/arex',
      hostname: 'ce.example.org',
      sessionSpace: () => ({ totalBytes: 100, freeBytes: 50 }),
      lrms: { name: 'kubernetes' },
      trustedCas: [],
      startTime: new Date(0),
    });
    const apps = findElement(source.document(), 'ApplicationEnvironments');
    const names = (apps?.children ?? [])
      .filter((c): c is XmlElement => typeof c !== 'string')
      .map((a) => {
        const n = elementText(a, 'AppName');
        const v = elementText(a, 'AppVersion');
        return v === undefined ? n : `${n}-${v}`;
      });
    assert.deepEqual(names.sort(), ['APPS/A-1.0', 'APPS/C', 'ENV/C-TOO']);
  });
});
