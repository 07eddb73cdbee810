/**
 * A reason the service cannot start that the operator can act on (state directory in
 * use, address in use, ...). `ceres serve` prints the message alone and exits non-zero;
 * anything else that fails at start is a bug and keeps its stack.
 */
export class StartError extends Error {
  override readonly name: string = 'StartError';
}

/** The listener could not be opened: a message naming the address and the cause. */
export function listenError(host: string, port: number, e: unknown): StartError {
  const code = (e as NodeJS.ErrnoException).code;
  const why =
    code === 'EADDRINUSE'
      ? 'the address is already in use'
      : code === 'EACCES'
        ? 'permission denied (ports below 1024 need privileges)'
        : code === 'EADDRNOTAVAIL'
          ? 'the address is not available on this host'
          : e instanceof Error
            ? e.message
            : String(e);
  return new StartError(`cannot listen on ${host.includes(':') ? `[${host}]` : host}:${port}: ${why}`, { cause: e });
}
