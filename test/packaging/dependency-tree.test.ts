// The locked dependency tree agrees with what Ceres declares: every package in it runs on
// the oldest Node that `engines` promises (npm warns EBADENGINE otherwise, and the
// package may use what that Node lacks), and every package with an install script is
// named in `allowScripts` (npm 11 warns of the others and a stricter npm skips their
// scripts: better-sqlite3's would then leave the SQLite addon unbuilt). `.ci/run` checks
// the same on a real `npm ci`; this checks the files themselves, in a second.
import { it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

interface Semver {
  minVersion(range: string): { version: string } | null;
  satisfies(version: string, range: string): boolean;
}
const semver = createRequire(import.meta.url)('semver') as Semver;

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));
interface Manifest {
  engines?: { node?: string };
  allowScripts?: Record<string, boolean>;
}
interface LockEntry {
  version?: string;
  engines?: { node?: string } | string[];
  hasInstallScript?: boolean;
}
const manifest = JSON.parse(readFileSync(`${ROOT}package.json`, 'utf8')) as Manifest;
const lock = JSON.parse(readFileSync(`${ROOT}package-lock.json`, 'utf8')) as {
  packages: Record<string, LockEntry>;
};
const installed = Object.entries(lock.packages).filter(([path]) => path.startsWith('node_modules/'));
const nameOf = (path: string): string => path.slice(path.lastIndexOf('node_modules/') + 'node_modules/'.length);

it('every locked package runs on the oldest Node that Ceres declares', () => {
  const oldest = semver.minVersion(manifest.engines?.node ?? '')?.version;
  assert.ok(oldest, 'package.json declares engines.node');
  const refusing = installed
    .map(([path, e]) => ({
      name: `${nameOf(path)}@${e.version ?? '?'}`,
      range: Array.isArray(e.engines) ? undefined : e.engines?.node,
    }))
    .filter((p) => p.range !== undefined && !semver.satisfies(oldest, p.range))
    .map((p) => `${p.name} requires node ${p.range}`);
  assert.deepEqual(refusing, [], `these need a newer Node than ${oldest}`);
});

it('every locked package with an install script is named in allowScripts', () => {
  const allowed = manifest.allowScripts ?? {};
  const covered = (name: string, version: string | undefined): boolean =>
    allowed[name] !== undefined || (version !== undefined && allowed[`${name}@${version}`] !== undefined);
  const uncovered = installed
    .filter(([path, e]) => e.hasInstallScript === true && !covered(nameOf(path), e.version))
    .map(([path, e]) => `${nameOf(path)}@${e.version ?? '?'}`);
  assert.deepEqual(uncovered, [], 'install scripts not covered by allowScripts');
  assert.equal(allowed['better-sqlite3'], true, 'the SQLite addon is built at install');
});
