/**
 * An operator-facing PKI failure (bad CA directory, unusable PKI folder, bad user
 * name). Raised at start-up or by `ceres pki`, never sent to a client, so the
 * message may name files.
 */
export class PkiError extends Error {
  override readonly name = 'PkiError';
}
