/**
 * One undici Agent per credential, kept for one job's staging and closed after it:
 * connections (and TLS sessions) are reused between that job's files, and a
 * credential's key never outlives the job in a connection pool. An X.509 delegation
 * is the TLS client certificate: the proxy chain as `cert`, its key as `key`.
 *
 * undici (over 1 MB of source, several MiB of heap once compiled) is loaded with the
 * first transfer, not at start: a service whose jobs move no data never loads it
 * (docs/performance.md, "Memory").
 */
import { rootCertificates } from 'node:tls';
import type * as Undici from 'undici';
import type { Agent } from 'undici';
import { credentialFingerprint, type Credential } from '../credentials.js';

let undici: Promise<typeof Undici> | undefined;
/** undici, imported once on first use. */
export const loadUndici = (): Promise<typeof Undici> => (undici ??= import('undici'));

export interface AgentSetOptions {
  readonly connectTimeoutMs: number;
  /** Extra trusted CA certificates (PEM), added to Node's bundled roots. */
  readonly ca?: readonly string[];
}

export class AgentSet {
  private readonly agents = new Map<string, Agent>();
  private closed = false;

  constructor(private readonly opts: AgentSetOptions) {}

  async agentFor(credential: Credential | undefined): Promise<Agent> {
    if (this.closed) throw new Error('agent set already closed');
    const key = credentialFingerprint(credential);
    let agent = this.agents.get(key);
    if (agent !== undefined) return agent;
    const { Agent } = await loadUndici();
    if (this.closed) throw new Error('agent set already closed');
    agent = this.agents.get(key); // made by a concurrent call meanwhile
    if (agent === undefined) {
      agent = new Agent({
        connect: {
          timeout: this.opts.connectTimeoutMs,
          rejectUnauthorized: true,
          ...(this.opts.ca !== undefined && this.opts.ca.length > 0
            ? { ca: [...rootCertificates, ...this.opts.ca] }
            : {}),
          ...(credential?.kind === 'x509' ? { cert: credential.certChainPem, key: credential.keyPem } : {}),
        },
        keepAliveTimeout: 10_000,
        // Bodies are streamed to files; a pipelined request would wait behind a multi-GB body.
        pipelining: 1,
      });
      this.agents.set(key, agent);
    }
    return agent;
  }

  get size(): number {
    return this.agents.size;
  }

  async close(): Promise<void> {
    this.closed = true;
    const all = [...this.agents.values()];
    this.agents.clear();
    await Promise.all(all.map((a) => a.destroy().catch(() => undefined)));
  }
}
