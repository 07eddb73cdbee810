/**
 * "Ran exactly once", seen from outside the service: every soak job runs one script
 * that first appends "<token> <job id> <account>" to a ledger file the harness owns (outside any
 * session directory, so cleaning a job does not lose its line), then optionally reads
 * its upload and sleeps. The token is unique per submission, so a token on two lines
 * is a job that was started twice (e.g. re-run after a restart of the service).
 */
import { chmod, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

export interface Ledger {
  readonly path: string;
  readonly script: string;
}

/** Writes the job script and an empty ledger into `dir` (a directory of the harness). */
export async function makeLedger(dir: string): Promise<Ledger> {
  const path = join(dir, 'ran.log');
  const script = join(dir, 'soak-job.sh');
  await writeFile(path, '');
  // $1 token, $2 seconds to sleep. One short append: lines of concurrent jobs never interleave.
  await writeFile(
    script,
    [
      '#!/bin/sh',
      `echo "$1 $RUNTIME_JOB_ID $(id -un)" >> '${path}'`,
      'if [ -f in.dat ]; then wc -c < in.dat; fi',
      'sleep "${2:-0}"',
      'echo "done $1"',
      '',
    ].join('\n'),
  );
  await chmod(script, 0o755);
  // The jobs append as whoever they run as: a root service runs them as an unprivileged
  // account (`nobody` without a mapping), which must pass the folder and write the ledger.
  await chmod(path, 0o666);
  await chmod(dir, 0o711);
  return { path, script };
}

/** The xRSL of a soak job: token, seconds to sleep, and optionally an input file the client uploads. */
export function soakJob(l: Ledger, token: string, sleepS: number, withUpload: boolean): string {
  const upload = withUpload ? '(inputfiles=("in.dat" ""))' : '';
  return `&(executable="${l.script}")(arguments="${token}" "${sleepS}")(stdout="out")(jobname="soak-${token}")${upload}`;
}

/** The accounts the jobs ran as, with how many runs each. */
export function runsByAccount(l: Ledger): Promise<Map<string, number>> {
  return countField(l, 2);
}

/** How many times each token ran. */
export function runsByToken(l: Ledger): Promise<Map<string, number>> {
  return countField(l, 0);
}

/** How many ledger lines hold each value of field `n` (space-separated). */
async function countField(l: Ledger, n: number): Promise<Map<string, number>> {
  const m = new Map<string, number>();
  const text = await readFile(l.path, 'utf8').catch(() => '');
  for (const line of text.split('\n')) {
    const v = line.split(' ')[n];
    if (v) m.set(v, (m.get(v) ?? 0) + 1);
  }
  return m;
}
