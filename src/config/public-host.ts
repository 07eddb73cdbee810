/**
 * The host name Ceres calls itself by when none is configured (`cluster.hostname`,
 * `publicUrl`): the listen address exactly as given, so the printed service URL is the
 * one the operator typed and the development host certificate covers (it names
 * `localhost` and `127.0.0.1`). A wildcard address names no host: `localhost` then.
 * Requests still see the host they addressed (see the info document's endpoint URL).
 */
export function defaultPublicHost(listenHost: string): string {
  return listenHost === '0.0.0.0' || listenHost === '::' ? 'localhost' : listenHost;
}
