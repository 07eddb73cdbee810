/**
 * Job-state names in SQL text. The names come from src/vocabulary/job-states.ts, where the
 * compiler checks them; a name spelled out inside a query would escape that check
 * (test/layers/state-names.test.ts finds one). Interpolated, not bound: a constant list
 * makes one statement the planner sees whole (an index range per name).
 */
import type { InternalState, RestState } from '../vocabulary/job-states.js';

/** `'A','B'`: the names as SQL string literals, for `IN (...)`. */
export function sqlStates(names: readonly (InternalState | RestState)[]): string {
  if (names.length === 0) throw new Error('an empty state list makes no SQL list');
  return names.map(sqlState).join(',');
}

/** `'A'`: one name as an SQL string literal. */
export function sqlState(name: InternalState | RestState): string {
  // The vocabulary's names are capital letters; anything else would need quoting.
  if (!/^[A-Z]+$/.test(name)) throw new Error(`not a state name: ${name}`);
  return `'${name}'`;
}
