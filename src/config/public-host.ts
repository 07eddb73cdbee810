/**
 * The host name Ceres calls itself by when none is configured (`cluster.hostname`,
 * `publicUrl`): the listen address exactly as given, so the printed service URL is the
 * one the operator typed and the development host certificate covers (it names
 * `localhost` and `127.0.0.1`). A wildcard address (`0.0.0.0`, `::`) names no host:
 * the machine's host name then, never `localhost`, which would publish an endpoint URL
 * (and GLUE2 ids) no remote client can use. Sites set `cluster.hostname` to the name in
 * their host certificate. Requests still see the host they addressed (see the info
 * document's endpoint URL).
 */
import { hostname } from 'node:os';

export function isWildcardAddress(listenHost: string): boolean {
  return listenHost === '0.0.0.0' || listenHost === '::' || listenHost === '';
}

export function defaultPublicHost(listenHost: string, machineName: string = hostname()): string {
  return isWildcardAddress(listenHost) ? machineName : listenHost;
}
