import { Type } from '@sinclair/typebox';
import { DAY, HOUR, KiB, MiB, MINUTE } from '../units.js';

/** Credential delegations. Keys live under `delegations`; every key needs a default and a line in docs/configuration.md. */
export const delegationsSection = {
  delegations: Type.Object(
    {
      keyBits: Type.Union([Type.Literal(2048), Type.Literal(3072), Type.Literal(4096)], {
        default: 2048,
        description: 'RSA key size of the key pair made for each X.509 delegation request (A-REX: 2048)',
      }),
      keyPoolSize: Type.Integer({
        default: 4,
        minimum: 0,
        maximum: 64,
        description:
          'Key pairs made ahead of time, in the background, so that action=new and renew answer at once instead of after a key generation (0.1-0.7 s); filling starts once the service is serving. 0 makes each key when asked',
      }),
      requestLifetimeSeconds: Type.Integer({
        default: 1 * HOUR,
        minimum: 60,
        description:
          'How long a certificate request (action=new or renew) waits for its signed certificate (PUT); after that the request lapses and a delegation that never got a certificate is removed',
      }),
      expiredRetentionSeconds: Type.Integer({
        default: 7 * DAY,
        minimum: 0,
        description:
          'Grace period after a delegated credential expires: it is no longer listed or used, but its owner can still renew or delete it; afterwards it is removed',
      }),
      maxPerUser: Type.Integer({
        default: 10_000,
        minimum: 1,
        description:
          'Most unexpired delegations (pending requests included) one user may hold; action=new beyond it is a 403',
      }),
      maxCertificateBodyBytes: Type.Integer({
        default: 1 * MiB,
        minimum: 4 * KiB,
        description: 'Largest body of a delegation PUT (the signed proxy and its chain; A-REX reads at most 1 MiB)',
      }),
      maxTokenBytes: Type.Integer({
        default: 8 * KiB,
        minimum: 256,
        description: 'Largest token accepted in X-Delegation / X-Token-Delegation for a JWT delegation',
      }),
      sweepIntervalSeconds: Type.Integer({
        default: 5 * MINUTE,
        minimum: 1,
        description:
          'How often lapsed requests, expired delegations past their grace period and orphaned key files are removed',
      }),
    },
    { default: {}, additionalProperties: false },
  ),
};
