/**
 * The monitoring role (config `authorization.monitors`, docs/security.md "Monitoring
 * role"): the members of an authorization group may list and follow the jobs of the VOs
 * the entry names, whoever submitted them, and never act on them. A job's VO is that of
 * its first FQAN (src/store/migrations.ts, migration 17).
 *
 * What a monitor may do with a job of another owner in a VO it monitors: list it (`GET
 * jobs?monitor=<vo>`), follow it (the event stream and `since=` with `monitor=<vo>`), and
 * ask its state and information document (`action=status|info` with `monitor=<vo>`).
 * Everything that changes the job (kill, clean, restart), its delegations, its session
 * files and its control-directory files answer 403 CE_ERR_JOB_MONITOR_READ_ONLY: a session
 * holds the user's data and sometimes credentials, which the role does not extend to.
 */
import { ceError } from '../errors/ce-error.js';

/** What the role needs to know of a caller: the VOs it monitors (absent: none). */
export interface MonitorCaller {
  readonly monitors?: readonly string[];
}

/** The VOs the members of `groups` monitor, in configuration order, each once. */
export function monitoredVos(
  entries: readonly { readonly group: string; readonly vos: readonly string[] }[],
  groups: readonly string[],
): string[] {
  const out = new Set<string>();
  for (const e of entries) if (groups.includes(e.group)) for (const vo of e.vos) out.add(vo);
  return [...out];
}

/** `vo` when the caller monitors it; otherwise a 403 naming what it does monitor. */
export function monitoredVo(caller: MonitorCaller, vo: string): string {
  const mine = caller.monitors ?? [];
  if (mine.includes(vo)) return vo;
  throw ceError(
    'CE_ERR_JOB_NOT_MONITOR',
    `the caller does not monitor the jobs of VO '${vo.slice(0, 64)}'${mine.length ? ` (it monitors: ${mine.join(', ')})` : ''}`,
  );
}

/** Whether the caller monitors the VO `vo` of a job (null: a job without a VO). */
export function monitors(caller: MonitorCaller, vo: string | null | undefined): boolean {
  return vo !== null && vo !== undefined && (caller.monitors ?? []).includes(vo);
}
