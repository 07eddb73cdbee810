import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as os from 'node:os';
import {
  glue2OsFamily,
  glue2Platform,
  parseCpuVendor,
  parseOsRelease,
  readHostFacts,
} from '../../src/info/host-facts.js';
import { buildInfoDocument } from '../../src/info/info-document.js';
import { snapshot } from './fixtures.js';
import { all, text } from './tree.js';

test('parseOsRelease reads ID and VERSION_ID, quoted or not', () => {
  assert.deepEqual(
    parseOsRelease(
      'PRETTY_NAME="Debian GNU/Linux 12 (bookworm)"\nNAME="Debian GNU/Linux"\nVERSION_ID="12"\nID=debian\n',
    ),
    { name: 'debian', version: '12' },
  );
  assert.deepEqual(parseOsRelease("ID='Ubuntu'\nVERSION_ID='24.04'"), { name: 'ubuntu', version: '24.04' });
  assert.deepEqual(parseOsRelease('ID_LIKE=rhel\nVERSION_ID=""\n'), {});
  assert.deepEqual(parseOsRelease(''), {});
  assert.deepEqual(parseOsRelease('garbage\n==\nID'), {});
});

test('GLUE2 platform and OS family names', () => {
  assert.equal(glue2Platform('x64'), 'amd64');
  assert.equal(glue2Platform('arm64'), 'aarch64');
  assert.equal(glue2Platform('ppc64'), 'ppc64le');
  assert.equal(glue2Platform('ppc64', 'BE'), 'ppc64');
  assert.equal(glue2Platform('mips'), undefined);
  assert.equal(glue2OsFamily('linux'), 'linux');
  assert.equal(glue2OsFamily('darwin'), 'macosx');
  assert.equal(glue2OsFamily('aix'), undefined);
});

test('parseCpuVendor reads vendor_id, absent when missing', () => {
  assert.equal(parseCpuVendor('processor\t: 0\nvendor_id\t: AuthenticAMD\nmodel name\t: AMD EPYC\n'), 'AuthenticAMD');
  assert.equal(parseCpuVendor('processor\t: 0\nCPU implementer\t: 0x41\n'), undefined);
});

test('readHostFacts on this machine: real numbers, no undefined-valued keys', () => {
  const f = readHostFacts();
  assert.equal(f.logicalCpus, os.availableParallelism());
  assert.equal(f.mainMemoryBytes, os.totalmem());
  assert.equal(f.totalInstances, 1);
  for (const [k, v] of Object.entries(f)) assert.notEqual(v, undefined, k);
  if (f.cpuClockMhz !== undefined) assert.ok(f.cpuClockMhz > 0);
  const doc = buildInfoDocument(snapshot({ host: f }));
  const ee =
    'Domains/AdminDomain/Services/ComputingService/ComputingManager/ExecutionEnvironments/ExecutionEnvironment';
  assert.equal(text(doc, `${ee}/MainMemorySize`), String(Math.floor(os.totalmem() / 1024 ** 2)));
  assert.equal(text(doc, `${ee}/LogicalCPUs`), String(os.availableParallelism()));
  assert.equal(all(doc, `${ee}/OSFamily`).length, glue2OsFamily(os.platform()) === undefined ? 0 : 1);
});
