/**
 * VOMS attributes for the connection authenticator: given a verified client chain and
 * its identity, the identity with `voms` filled when a proxy carries an attribute
 * certificate that verifies (src/auth/voms/verify-ac.ts). Attributes that do not verify
 * are ignored with one log line saying why: the client stays authenticated by its
 * certificate, only without attributes (or without those of the ACs that failed, when
 * another AC of the proxy verified). Nothing here throws into the TLS path.
 */
import { parseCertificate } from '../../pki/certificate.js';
import type { TrustStore } from '../../pki/trust-store.js';
import type { AttributeVerifier } from '../authenticate-chain.js';
import type { X509Identity } from '../identity.js';
import { verifyVomsAttributes } from './verify-ac.js';
import { VomsDir, type VomsLog } from './voms-dir.js';

export interface VomsVerifierOptions {
  /** The VOMS directory (`<vo>/<host>.lsc`, server certificates). */
  readonly dir: string;
  /** How often the directory is looked at again (ms). */
  readonly recheckMs?: number;
  /** Allowance before an AC's notBefore (ms). */
  readonly skewMs?: number;
  /** Names of this service, for ACs that name their targets. */
  readonly hostnames?: readonly string[];
  readonly log?: VomsLog;
}

export class VomsVerifier implements AttributeVerifier {
  readonly vomsDir: VomsDir;

  constructor(private readonly o: VomsVerifierOptions) {
    this.vomsDir = new VomsDir(o.dir, o.recheckMs, o.log);
  }

  refresh(now: number): number {
    return this.vomsDir.refresh(now);
  }

  addAttributes(
    ders: readonly Uint8Array[],
    identity: X509Identity,
    trust: TrustStore,
    now: number,
  ): { identity: X509Identity; cacheable: boolean } {
    if (identity.proxyDepth === 0 || !this.vomsDir.present) return { identity, cacheable: true };
    try {
      const chain = ders.slice(0, identity.proxyDepth + 1).map((d) => parseCertificate(d));
      const r = verifyVomsAttributes(
        chain,
        identity.proxyDepth,
        {
          trust,
          dir: this.vomsDir,
          ...(this.o.skewMs === undefined ? {} : { skewMs: this.o.skewMs }),
          ...(this.o.hostnames === undefined ? {} : { hostnames: this.o.hostnames }),
        },
        now,
      );
      if (r === undefined) return { identity, cacheable: true };
      if (r.ok) {
        if (r.ignored.length > 0)
          this.o.log?.info(
            { dn: identity.dn, reason: r.ignored.join('; '), usedVo: r.attributes.vo },
            'VOMS attributes ignored',
          );
        // An AC may outlive the proxy it travels in: its attributes are never given past the chain's end.
        const notAfter = Math.min(r.attributes.notAfter.getTime(), identity.notAfter.getTime());
        return {
          identity: { ...identity, voms: { ...r.attributes, notAfter: new Date(notAfter) } },
          cacheable: !r.soon,
        };
      }
      this.o.log?.info({ dn: identity.dn, reason: r.reason }, 'VOMS attributes ignored');
      return { identity, cacheable: !r.soon };
    } catch (e) {
      this.o.log?.warn({ dn: identity.dn, err: e }, 'VOMS attributes ignored: verification failed unexpectedly');
      return { identity, cacheable: false };
    }
  }
}
