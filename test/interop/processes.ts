/**
 * Finds live `sleep <seconds>` processes through /proc (Linux), so a test can see a job's
 * payload run and then see it gone after a kill. Zombies (exited, not yet reaped) count as
 * gone: their command line is empty and their state is Z.
 */
import { readdirSync, readFileSync } from 'node:fs';

export function sleepProcesses(seconds: number): number[] {
  const arg = String(seconds);
  const found: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    let argv: string[];
    let stat: string;
    try {
      argv = readFileSync(`/proc/${name}/cmdline`, 'utf8').split('\0');
      stat = readFileSync(`/proc/${name}/stat`, 'utf8');
    } catch {
      continue; // exited meanwhile
    }
    // stat: "pid (comm) S ..."; comm may contain spaces, the state follows the last ')'.
    const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
    if (state === 'Z' || state === 'X') continue;
    if ((argv[0] ?? '').split('/').pop() === 'sleep' && argv[1] === arg) found.push(Number(name));
  }
  return found;
}
