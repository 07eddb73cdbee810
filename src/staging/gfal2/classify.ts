/**
 * gfal2's failures (an errno and a message) as StagingErrors a user can act on. gfal2
 * reports errno values: 2 missing, 13 permission, 17 exists, 84 checksum, 110 timed out,
 * 111/113 server down or unreachable. Its messages can carry the URL with the proxy path
 * appended (`?xrd.gsiusrpxy=...`): only our own words and the redacted URL go out.
 *
 * Timeouts are told first: xrootd reports a request that got no answer in time as
 * "Operation expired" (errno 116), which is a stalled server, not an expired credential,
 * and must stay retryable. Only an expired proxy, certificate or credential, or xrootd's
 * "Auth failed", counts as a credential problem.
 */
import { stagingError, type StagingError } from '../staging-error.js';

const NETWORK = new Set([32, 101, 103, 104, 111, 112, 113, 70, 107, 5]);

export function gfal2Error(errno: number, message: string): StagingError {
  const m = message.toLowerCase();
  if (errno === 110 || errno === 116 || /timed out|timeout|operation expired/.test(m))
    return stagingError('CE_ERR_STAGING_TIMEOUT', 'timed out (server stalled or down)', { transient: true });
  if (/(proxy|certificate|credential|token)[^.]*expired|no protocols left|auth failed/.test(m))
    return stagingError(
      'CE_ERR_STAGING_NO_CREDENTIAL',
      'authentication failed: the delegated credential is missing, expired or not accepted',
    );
  if (errno === 2) return stagingError('CE_ERR_STAGING_REMOTE_STATUS', 'no such file (missing at the source)');
  if (errno === 13 || errno === 1) return stagingError('CE_ERR_STAGING_ACCESS_DENIED', 'permission denied');
  if (errno === 17)
    return stagingError('CE_ERR_STAGING_REMOTE_STATUS', 'destination exists and overwrite is not allowed');
  if (errno === 84 || m.includes('checksum'))
    return stagingError('CE_ERR_STAGING_CHECKSUM_MISMATCH', 'checksum mismatch between source and destination');
  if (NETWORK.has(errno) || /connection|socket|invalid address/.test(m))
    return stagingError('CE_ERR_STAGING_NETWORK', `server down or unreachable (errno ${errno})`, { transient: true });
  return stagingError('CE_ERR_STAGING_REMOTE_STATUS', `transfer failed (errno ${errno})`, { transient: true });
}
