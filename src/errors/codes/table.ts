export interface ErrorEntry {
  /** HTTP status of a whole-request failure, and the per-item status-code in bulk answers. */
  readonly status: number;
  /** Default client-facing message (also the HTTP reason phrase). One line, no secrets. */
  readonly message: string;
}
export type ErrorTable = Readonly<Record<`CE_ERR_${string}`, ErrorEntry>>;
