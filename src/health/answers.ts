/**
 * The health answers, shared by the main HTTPS port and the loopback listener.
 *   GET /health/live   200 {"status":"live"}
 *   GET /health/ready  200 {"status":"ready"} or 503 {"status":"not ready", "failing": [...]}
 *                      either with "warnings": [{"name", "reason"}] when an advisory check fails
 * On the main port (reachable by anyone) a failing check is named, not explained; the
 * loopback listener adds each check's reason. An advisory check's warning carries its
 * reason on both (./readiness.ts: such reasons say only what is public).
 */
import type { Readiness } from './readiness.js';

export const LIVE_PATH = '/health/live';
export const READY_PATH = '/health/ready';

export function readyBody(r: Readiness, detailed: boolean): { status: number; body: string } {
  const failing = r.checks.filter((c) => !c.ok && c.advisory !== true);
  const warned = r.checks.filter((c) => !c.ok && c.advisory === true);
  const warnings = warned.length === 0 ? {} : { warnings: warned.map((c) => ({ name: c.name, reason: c.reason })) };
  const doc = r.ready
    ? { status: 'ready', ...warnings, ...(detailed ? { checks: r.checks } : {}) }
    : {
        status: 'not ready',
        failing: failing.map((c) => c.name),
        ...warnings,
        ...(detailed ? { checks: r.checks } : {}),
      };
  return { status: r.ready ? 200 : 503, body: `${JSON.stringify(doc)}\n` };
}

export const LIVE_BODY = `${JSON.stringify({ status: 'live' })}\n`;
