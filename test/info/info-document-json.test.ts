/**
 * The service document as JSON clients read it (rendered with `renderJson(root)`,
 * no forced arrays, as ARC 7 does for `info`). The walkers below do exactly what
 * pyarcrest does with the decoded JSON (dict lookups with defaults, "a dict means
 * one item"), so a shape it cannot walk fails here.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { renderJson } from '../../src/doc/render-json.js';
import { buildInfoDocument } from '../../src/info/info-document.js';
import type { InfoSnapshot } from '../../src/info/info-snapshot.js';
import { snapshot } from './fixtures.js';
import { scalars } from './tree.js';

type Obj = Record<string, unknown>;

class PyError extends Error {}

/** Python's `d.get(k, default)` on a value that must be a dict (AttributeError otherwise). */
function get(d: unknown, k: string, dflt: unknown): unknown {
  if (d === null || typeof d !== 'object' || Array.isArray(d))
    throw new PyError(`'${typeof d}' object has no attribute 'get' (key ${k})`);
  return k in (d as Obj) ? (d as Obj)[k] : dflt;
}

function service(info: unknown): unknown {
  return get(get(get(get(info, 'Domains', {}), 'AdminDomain', {}), 'Services', {}), 'ComputingService', {});
}

/** pyarcrest `_findQueue`. */
function findQueue(info: unknown, queue: string): Obj | undefined {
  let shares = get(service(info), 'ComputingShare', []);
  if (Array.isArray(shares) ? shares.length === 0 : !shares) return undefined;
  if (!Array.isArray(shares)) shares = [shares];
  for (const s of shares as unknown[]) {
    if (get(s, 'Name', null) === queue) return 'MappingPolicy' in (s as Obj) ? undefined : (s as Obj);
  }
  return undefined;
}

/** pyarcrest `_findRuntimes`. */
function findRuntimes(info: unknown): string[] {
  let envs = get(
    get(get(service(info), 'ComputingManager', {}), 'ApplicationEnvironments', {}),
    'ApplicationEnvironment',
    [],
  );
  if (!Array.isArray(envs)) envs = [envs];
  const out: string[] = [];
  for (const e of envs as Obj[]) {
    if ('AppName' in e)
      out.push('AppVersion' in e ? `${String(e.AppName)}-${String(e.AppVersion)}` : String(e.AppName));
  }
  return out;
}

/** pyarcrest `_matchWalltime`: `int(queueInfo["MaxWallTime"])`. */
function maxWallTime(info: unknown, queue: string): number | undefined {
  const q = findQueue(info, queue);
  if (!q) throw new PyError(`Queue ${queue} not found to match walltime`);
  if (!('MaxWallTime' in q)) return undefined;
  const v = q.MaxWallTime;
  assert.equal(typeof v, 'string');
  assert.match(v as string, /^\d+$/);
  return Number(v);
}

function json(s: InfoSnapshot): unknown {
  return JSON.parse(renderJson(buildInfoDocument(s)));
}

test('one queue: ComputingShare is a single object, and pyarcrest finds it', () => {
  const info = json(snapshot());
  assert.ok(!Array.isArray(get(service(info), 'ComputingShare', null)));
  assert.equal(findQueue(info, 'main')?.Name, 'main');
  assert.equal(findQueue(info, 'nosuch'), undefined);
  assert.equal(maxWallTime(info, 'main'), 86400);
});

test('two queues: ComputingShare is an array; each queue is found by Name', () => {
  const info = json(snapshot({ queues: [{ name: 'main', maxWallTimeSeconds: 60 }, { name: 'long' }] }));
  const shares = get(service(info), 'ComputingShare', null);
  assert.ok(Array.isArray(shares) && shares.length === 2);
  assert.equal(maxWallTime(info, 'main'), 60);
  assert.equal(maxWallTime(info, 'long'), undefined);
  assert.ok(!('MappingPolicy' in (findQueue(info, 'long') ?? {})));
});

test('no queues: pyarcrest sees none (its "No queues found on cluster"), without crashing', () => {
  const info = json(snapshot({ queues: [] }));
  assert.equal(get(service(info), 'ComputingShare', 'absent'), 'absent');
  assert.equal(findQueue(info, 'main'), undefined);
  assert.throws(() => maxWallTime(info, 'main'), PyError);
});

test('runtime environments as pyarcrest lists them: name-version, one or many, or none', () => {
  assert.deepEqual(
    findRuntimes(json(snapshot({ runtimeEnvironments: [{ name: 'APPS/FOO-1.0' }, { name: 'ENV/PROXY' }] }))),
    ['APPS/FOO-1.0', 'ENV/PROXY'],
  );
  assert.deepEqual(findRuntimes(json(snapshot({ runtimeEnvironments: [{ name: 'APPS/HEP/ATLAS-21.0.1' }] }))), [
    'APPS/HEP/ATLAS-21.0.1',
  ]);
  // With none the container is absent: an empty element would render as "" and break `.get`.
  assert.deepEqual(findRuntimes(json(snapshot({ runtimeEnvironments: [] }))), []);
});

test('every JSON scalar is a string; attributes under _attributes without namespace declarations', () => {
  const info = json(snapshot({ queues: [{ name: 'a' }, { name: 'b' }], runtimeEnvironments: [{ name: 'X-1' }] }));
  for (const [path, v] of scalars(info)) assert.equal(typeof v, 'string', path);
  const domains = get(info, 'Domains', null) as Obj;
  assert.deepEqual(domains._attributes, {
    schemaLocation: 'https://raw.github.com/OGF-GLUE/XSD/master/schema/GLUE2.xsd',
  });
  const cs = service(info) as Obj;
  assert.deepEqual(cs._attributes, { BaseType: 'Service', CreationTime: '2026-11-21T22:19:14Z', Validity: '10800' });
  assert.deepEqual(Object.keys(cs).slice(-1), ['_attributes']);
});

test('multi-valued properties are arrays, single ones strings (ARC 7 grouping)', () => {
  const eps = get(service(json(snapshot({ trustedCas: ['/CN=Only CA'] }))), 'ComputingEndpoint', null) as Obj[];
  // One REST endpoint per interface version: two endpoints, an array.
  assert.ok(Array.isArray(eps) && eps.length === 2);
  const ep = eps[0]!;
  assert.ok(Array.isArray(ep.Capability) && ep.Capability.length === 7);
  assert.equal(ep.InterfaceVersion, '1.0');
  assert.equal(eps[1]!.InterfaceVersion, '1.1');
  assert.equal(ep.TrustedCA, '/CN=Only CA');
  assert.equal(ep.InterfaceName, 'org.nordugrid.arcrest');
  assert.equal(ep.HealthState, 'ok');
});

test('UTF-8 survives the JSON rendering as real characters, not byte escapes', () => {
  const text = renderJson(buildInfoDocument(snapshot({ clusterName: 'Uppsala Ås ✓' })));
  assert.ok(text.includes('Uppsala Ås ✓'));
  assert.ok(!/\\u00C3/i.test(text));
  const info = JSON.parse(text) as unknown;
  assert.equal(get(service(info), 'Name', null), 'Uppsala Ås ✓');
});
