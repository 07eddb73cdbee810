/**
 * Where the service keeps its database in a state directory, and whether a service runs
 * on it: the pid holding the state directory's lock (src/process/state-lock.ts), read
 * from /proc/locks without taking the lock (taking it, even briefly, could make a
 * service starting at that moment fail).
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { stateLayout } from '../../process/layout.js';
import { LOCK_FILE, lockHolder } from '../../process/state-lock.js';

export function dbFileOf(stateDir: string): string {
  return stateLayout(stateDir).db;
}

/** The pid of the service holding the state directory, or undefined when none runs. */
export function servicePid(stateDir: string): number | undefined {
  const lock = join(stateDir, LOCK_FILE);
  return existsSync(lock) ? lockHolder(lock) : undefined;
}
