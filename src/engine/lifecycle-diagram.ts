/**
 * The Mermaid state diagram of docs/lifecycle.md, drawn from the transition table so
 * and the state vocabulary, so the picture cannot drift from the code (test/engine/lifecycle-doc.test.ts compares).
 */
import { POSITIONS, restStatesAt, type Position } from '../vocabulary/job-states.js';
import { TRANSITIONS, type EventType } from './state-machine.js';

const id = (p: Position): string => p.replace(':', '_');

export function lifecycleMermaid(): string {
  const lines = ['stateDiagram-v2'];
  for (const p of POSITIONS) {
    if (p.includes(':')) lines.push(`    state "${p}" as ${id(p)}`);
    lines.push(`    ${id(p)} : REST ${restStatesAt(p).join(', ')}`);
  }
  lines.push('    [*] --> ACCEPTED : submission');
  // One edge per (from, to), labelled with every event that takes it.
  const edges = new Map<string, string[]>();
  for (const from of POSITIONS) {
    for (const [event, targets] of Object.entries(TRANSITIONS[from]) as [EventType, readonly Position[]][]) {
      for (const to of targets) {
        const key = event === 'clean-requested' ? `${id(from)} --> [*]` : `${id(from)} --> ${id(to)}`;
        const label = to.startsWith('PENDING:') && event !== 'restart-requested' ? `${event} [hold]` : event;
        edges.set(key, [...(edges.get(key) ?? []), label]);
      }
    }
  }
  for (const [edge, events] of edges) lines.push(`    ${edge} : ${events.join(', ')}`);
  return lines.join('\n');
}
