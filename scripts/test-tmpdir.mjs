// The temporary folder the test files of one run write under: a fresh folder on a tmpfs
// (/dev/shm) when the machine has one, else the system's (TMPDIR, /tmp).
//
// Why: the tests make and remove many small files and folders (state directories,
// SQLite databases, control files, session directories: thousands per file in the
// engine's bulk tests). On a disk-backed /tmp of a busy shared machine each of those
// metadata operations waits on the disk: measured on a loaded 2-core machine, the
// scheduler's unit tests took 62-67 s with /tmp and 28-35 s with /dev/shm, and removing
// 3,000 job folders took 6.8 s against 0.35 s. Nothing the tests check depends on the
// disk: a `kill -9` leaves the page cache as it is on either, and the service treats
// /dev/shm as the shared temporary folder it is (no private /tmp for sessions there).
//
// CERES_TEST_TMPDIR=PATH runs the tests under PATH instead; CERES_TEST_TMPDIR=system
// keeps the system's temporary folder.
import { accessSync, chmodSync, constants, mkdtempSync, rmSync, statSync, statfsSync } from 'node:fs';
import { join } from 'node:path';

/** The room a tmpfs must have free to be used (the suite writes up to a few hundred MiB at once). */
const MIN_FREE_BYTES = 4 * 1024 ** 3;

/** statfs type of a tmpfs (linux/magic.h). */
const TMPFS_MAGIC = 0x01021994;

function isWritableTmpfs(dir) {
  try {
    if (!statSync(dir).isDirectory()) return false;
    accessSync(dir, constants.W_OK | constants.X_OK);
    const fs = statfsSync(dir);
    // A container's /dev/shm is often 64 MiB: too small for the suite's files, so not taken.
    return fs.type === TMPFS_MAGIC && fs.bavail * fs.bsize >= MIN_FREE_BYTES;
  } catch {
    return false;
  }
}

/**
 * Makes the run's temporary folder and returns it with a function that removes it, or
 * undefined when the tests keep the system's. The folder is sticky and writable by all
 * (1777) as /tmp is: jobs under other local accounts write their temporary files there.
 */
export function makeTestTmpDir(env = process.env) {
  const wanted = env.CERES_TEST_TMPDIR;
  if (wanted === 'system') return undefined;
  const parent = wanted || (isWritableTmpfs('/dev/shm') ? '/dev/shm' : undefined);
  if (parent === undefined) return undefined;
  // Short: daemons put Unix sockets under it (at most 107 bytes of path).
  const dir = mkdtempSync(join(parent, 'ceres-t-'));
  chmodSync(dir, 0o1777);
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}
