/**
 * Data-staging metrics from each stage-in/stage-out result: bytes, transfers and
 * failures by error code. Only network transfers count (downloads and uploads);
 * client uploads and kept outputs move nothing.
 */
import type { StageResult } from '../staging/index.js';
import type { Metrics } from './instruments.js';

export function stagingObserver(m: Metrics): (direction: 'in' | 'out', r: StageResult) => void {
  return (direction, r) => {
    for (const f of r.files) {
      if (f.kind !== 'download' && f.kind !== 'upload') continue;
      // A transfer cut short by a cancel or shutdown is neither a success nor a failure.
      if (!f.ok && r.cancelled) continue;
      m.stagingTransfers.inc({ direction, result: f.ok ? 'ok' : 'failed' });
      if (f.ok) m.stagingBytes.inc({ direction }, f.bytes);
      else m.stagingFailures.inc({ direction, code: f.code ?? 'unknown' });
    }
  };
}
