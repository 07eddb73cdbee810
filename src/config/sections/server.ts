import { Type } from '@sinclair/typebox';
import { HOST_PORT, HTTPS_PREFIX, MOUNT_POINT } from '../patterns.js';
import { PATH } from '../paths.js';
import { SECOND } from '../units.js';

/** HTTPS listener, TLS credentials, logging and shutdown. */
export const serverSection = {
  listen: Type.String({
    default: '127.0.0.1:8443',
    ...HOST_PORT,
    description: 'HOST:PORT to listen on; port 0 picks a free port',
  }),
  stateDir: Type.String({
    ...PATH,
    default: './var',
    minLength: 1,
    description: 'Root of all state: database, control directory, session directories, dev PKI',
  }),
  mountPoint: Type.String({
    default: '/arex',
    ...MOUNT_POINT,
    description: 'Path of the service; the service URL is https://HOST:PORT<mountPoint>',
  }),
  publicUrl: Type.Optional(
    Type.String({
      ...HTTPS_PREFIX,
      description: 'Service URL published in the info document when the listener is behind another name',
    }),
  ),
  tls: Type.Object(
    {
      hostCert: Type.Optional(
        Type.String({
          ...PATH,
          minLength: 1,
          description: 'PEM host certificate (chain). Unset: the embedded dev PKI in <stateDir>/pki is used',
        }),
      ),
      hostKey: Type.Optional(
        Type.String({ ...PATH, minLength: 1, description: 'PEM private key of the host certificate' }),
      ),
      caDir: Type.Optional(
        Type.String({
          ...PATH,
          minLength: 1,
          description:
            'Directory of trusted CA certificates (OpenSSL hashed names <hash>.0 or *.pem) and their CRLs (<hash>.r0), followed while the service runs',
        }),
      ),
      handshakeTimeoutSeconds: Type.Number({ default: 30 * SECOND, exclusiveMinimum: 0 }),
      crlRecheckSeconds: Type.Number({
        default: 30 * SECOND,
        minimum: 1,
        description:
          'The CA directory is looked at again this often (at once on SIGHUP): a CA added or removed there, or a certificate revoked by its CRL (<hash>.r0), takes effect within this time',
      }),
    },
    { default: {}, additionalProperties: false },
  ),
  vomsDir: Type.String({
    ...PATH,
    default: '/etc/grid-security/vomsdir',
    minLength: 1,
    description:
      'VOMS trust directory: <vo>/<voms-host>.lsc files (the VOMS server subject DN, then its issuer DN) and optionally VOMS server certificates (*.pem). Re-read when it changes; an absent directory turns VOMS attributes off',
  }),
  http: Type.Object(
    {
      keepAliveTimeoutSeconds: Type.Number({
        default: 75,
        exclusiveMinimum: 0,
        description: 'Idle keep-alive connections are closed after this',
      }),
      requestTimeoutSeconds: Type.Number({
        default: 3600,
        exclusiveMinimum: 0,
        description: 'Upper bound on receiving one request (large uploads need time)',
      }),
      minBodyBytesPerSecond: Type.Integer({
        default: 1024,
        minimum: 0,
        description:
          'Body-rate floor: a request body (upload, submission, id list, delegation) must average at least this over every bodyRateWindowSeconds, or it is answered 408 and its connection closed. Time the service itself is behind does not count. 0 turns it off',
      }),
      bodyRateWindowSeconds: Type.Number({
        default: 120,
        minimum: 1,
        description:
          'Window of the body-rate floor: a trickling client is cut after one to 1.25 windows (the default tolerates long stalls of a slow link)',
      }),
      maxControlBodyBytes: Type.Integer({
        default: 16 * 1024 * 1024,
        minimum: 1024,
        description: 'Largest job-id list, delegation or other non-file request body',
      }),
      maxSubmitBodyBytes: Type.Integer({
        default: 100 * 1024 * 1024,
        minimum: 1024,
        description: 'Largest job submission body (A-REX: 100 MiB)',
      }),
      maxConnectionsPerIdentity: Type.Integer({
        default: 64,
        minimum: 1,
        description:
          'Open connections per identity (DN; remote address without one); requests on connections over it get 503 and the connection is closed',
      }),
      maxRequestsPerIdentity: Type.Integer({
        default: 32,
        minimum: 1,
        description:
          'Requests in progress per identity (DN; remote address without one); more get 429 with Retry-After',
      }),
    },
    { default: {}, additionalProperties: false },
  ),
  log: Type.Object(
    {
      level: Type.Union(
        [
          Type.Literal('fatal'),
          Type.Literal('error'),
          Type.Literal('warn'),
          Type.Literal('info'),
          Type.Literal('debug'),
          Type.Literal('trace'),
          Type.Literal('silent'),
        ],
        { default: 'info' },
      ),
      file: Type.Optional(
        Type.String({
          ...PATH,
          minLength: 1,
          description:
            'Write JSON log lines here instead of standard output; missing folders are made, and a file that cannot be opened stops the start',
        }),
      ),
      group: Type.Optional(
        Type.String({
          minLength: 1,
          description:
            "Group (a name or a numeric gid) that may read log.file: the file is then 0640 and that group's, otherwise 0600 (set at every start and every reopen after rotation); the lines name every DN, job id and remote address, so never a group jobs run in",
        }),
      ),
      bufferBytes: Type.Integer({
        default: 4096,
        minimum: 0,
        maximum: 8192,
        description:
          'Lines below warn are collected up to this many bytes and written together (0: each line at once); warnings and errors are written at once',
      }),
      flushMilliseconds: Type.Integer({
        default: 200,
        minimum: 10,
        maximum: 5000,
        description: 'Collected lines are written at the latest this long after the first of them',
      }),
    },
    { default: {}, additionalProperties: false },
  ),
  shutdownTimeoutSeconds: Type.Number({
    default: 30 * SECOND,
    exclusiveMinimum: 0,
    description: 'Graceful shutdown waits this long for in-flight requests, then forces',
  }),
};
