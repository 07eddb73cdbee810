import type { ConfigProblem } from '../config/authorization-check.js';

/**
 * A reason the configuration cannot work on this host, under the key that causes it. A
 * `warning` is something the service starts with (it logs it) that still fails the jobs
 * it concerns, such as a mapped account the site has yet to create; `ceres admin config
 * check` fails on both.
 */
export interface HostProblem extends ConfigProblem {
  readonly warning?: boolean;
}

/** `config key 'K': message`, as the start and the check print a problem (no key: a check that could not run). */
export function describeProblem(p: HostProblem): string {
  const where = p.key === '' ? '' : `config key '${p.key}': `;
  return `${p.warning === true ? 'warning: ' : ''}${where}${p.message}`;
}
