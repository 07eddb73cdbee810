import { Type, type Static } from '@sinclair/typebox';
import { GiB, HOUR, MINUTE, MiB, SECOND } from '../units.js';
import { PATH } from '../paths.js';
import { SHORT_NAME } from '../patterns.js';

const retry = Type.Object(
  {
    maxAttempts: Type.Integer({
      default: 5,
      minimum: 1,
      maximum: 100,
      description:
        'Attempts per file for transient failures (connection reset/refused, timeouts, 5xx, 429, truncated body); permanent failures (404, 403, size/checksum mismatch) are never retried',
    }),
    initialDelaySeconds: Type.Number({
      default: 2 * SECOND,
      exclusiveMinimum: 0,
      description: 'Delay before the first retry; doubles (see multiplier) per attempt, with random jitter',
    }),
    maxDelaySeconds: Type.Number({
      default: 2 * MINUTE,
      exclusiveMinimum: 0,
      description: 'Upper bound of one retry delay (also caps a server Retry-After)',
    }),
    multiplier: Type.Number({ default: 2, minimum: 1, description: 'Growth factor of the retry delay' }),
  },
  { default: {}, additionalProperties: false, description: 'Retries of transient transfer failures' },
);

const timeouts = Type.Object(
  {
    connectSeconds: Type.Number({
      default: 30 * SECOND,
      exclusiveMinimum: 0,
      description: 'TCP connect plus TLS handshake',
    }),
    headersSeconds: Type.Number({
      default: 2 * MINUTE,
      exclusiveMinimum: 0,
      description: 'From sending a request to the complete response headers',
    }),
    idleSeconds: Type.Number({
      default: 5 * MINUTE,
      exclusiveMinimum: 0,
      description: 'Longest pause between two chunks of a response body',
    }),
  },
  { default: {}, additionalProperties: false, description: 'Transfer timeouts' },
);

const cache = Type.Object(
  {
    enabled: Type.Boolean({
      default: true,
      description:
        'Keep downloaded inputs in the shared cache (<stateDir>/cache) and link them into session directories; the URL option cache=no bypasses it per file',
    }),
    maxBytes: Type.Integer({
      default: 10 * GiB,
      minimum: 0,
      description:
        'Size bound of the cache; least recently used files are evicted beyond it. A file larger than this is never kept',
    }),
    accessRecheckSeconds: Type.Number({
      default: 1 * HOUR,
      minimum: 0,
      description:
        "A user is given a cached file only if they fetched or could fetch its URL within this time; older checks are repeated with the user's credential (HEAD) first",
    }),
    lockStaleSeconds: Type.Number({
      default: 5 * MINUTE,
      exclusiveMinimum: 0,
      description: 'A download lock not refreshed for this long (its process is gone) is taken over',
    }),
  },
  { default: {}, additionalProperties: false, description: 'Shared cache of downloaded inputs (docs/data-staging.md)' },
);

const s3Endpoint = Type.Object(
  {
    host: Type.String({
      pattern: '^[A-Za-z0-9.-]+(:[0-9]{1,5})?$',
      errorMessage: 'HOST or HOST:PORT (a host name or IPv4 address, as the URLs name it)',
      description:
        'The endpoint as s3:// URLs name it: host, or host:port when the URLs carry a port (a URL matches only with the same port, its absence included)',
    }),
    accessKeyFile: Type.String({
      ...PATH,
      minLength: 1,
      description:
        'File holding the access key id (one line), mode 0600 (`ceres admin config check` refuses a file others can read); read at each use, so a rotated key needs no restart',
    }),
    secretKeyFile: Type.String({
      ...PATH,
      minLength: 1,
      description: 'File holding the secret key (one line), mode 0600; never written inline in the configuration',
    }),
    region: Type.String({ default: 'us-east-1', minLength: 1, description: 'Region the requests are signed for' }),
    pathStyle: Type.Boolean({
      default: true,
      description: 'Path-style URLs (host/bucket/key, gfal2 S3 ALTERNATE); false: virtual-host style (bucket.host/key)',
    }),
    allowGroups: Type.Optional(
      Type.Array(Type.String(SHORT_NAME), {
        minItems: 1,
        description:
          "Authorization groups whose jobs may use this endpoint's keys; absent: every user of the service may. With it, a dynamic output list (written by the job) cannot name the endpoint",
      }),
    ),
  },
  { additionalProperties: false },
);

const gfal2 = Type.Object(
  {
    transferSeconds: Type.Number({
      default: 6 * HOUR,
      exclusiveMinimum: 0,
      description: 'Longest time one gfal2 transfer (root://, gsiftp://, srm://, s3://) may take, whatever its size',
    }),
    minBytesPerSecond: Type.Integer({
      default: 100 * 1024,
      minimum: 1,
      description:
        'Transfer-rate floor of gfal2 transfers: a file of known size gets connect time plus size / floor, at most transferSeconds; a stalled server fails the attempt instead of hanging the job',
    }),
    maxTransfersPerHost: Type.Integer({
      default: 8,
      minimum: 1,
      description:
        'gfal2 transfers (and stats) in flight to one endpoint (protocol, host and port) across all jobs; further ones wait',
    }),
    s3Endpoints: Type.Array(s3Endpoint, {
      default: [],
      description:
        "S3 endpoints s3:// and s3s:// URLs may name, each with the site's keys (S3 takes keys, not the user's credentials); a URL naming any other endpoint is refused at submission. Transfers to these endpoints run as the service's account, never the job's, so no job can read the keys",
    }),
    maxTransfersPerProtocol: Type.Integer({
      default: 16,
      minimum: 1,
      description:
        'gfal2 transfers (and stats) in flight per protocol (the gfal2 plugin: xrootd, gridftp, srm, http for s3, sftp) across all jobs; further ones wait',
    }),
    spareHelpers: Type.Integer({
      default: 1,
      minimum: 0,
      maximum: 64,
      description:
        "gfal2 helper processes kept started ahead (Python and gfal2 loaded, no account or credential yet), each bound to one job's account and credential on that job's first gfal2 transfer and ended with it; started after the first gfal2 transfer. 0: every job starts its own",
    }),
  },
  { default: {}, additionalProperties: false, description: 'Transfers through gfal2 (docs/data-staging.md)' },
);

/** Data staging and cache. Keys live under `staging`; every key needs a default and a line in docs/configuration.md. */
export const stagingSection = {
  staging: Type.Object(
    {
      maxJobsStagingIn: Type.Integer({
        default: 10,
        minimum: 1,
        description: 'Jobs downloading inputs at the same time; further jobs wait (PREPARING) for a slot',
      }),
      maxJobsStagingOut: Type.Integer({
        default: 10,
        minimum: 1,
        description: 'Jobs uploading outputs at the same time; further jobs wait (FINISHING) for a slot',
      }),
      maxDownloads: Type.Integer({ default: 16, minimum: 1, description: 'File downloads in flight across all jobs' }),
      maxUploads: Type.Integer({ default: 8, minimum: 1, description: 'File uploads in flight across all jobs' }),
      maxTransfersPerJob: Type.Integer({
        default: 4,
        minimum: 1,
        description: 'Transfers in flight for one job, so a job with many files cannot take every slot',
      }),
      retry,
      timeouts,
      maxRedirects: Type.Integer({
        default: 10,
        minimum: 0,
        maximum: 50,
        description: 'Redirects followed per transfer; an https to http redirect is always refused',
      }),
      userUploadWaitSeconds: Type.Number({
        default: 600 * SECOND,
        exclusiveMinimum: 0,
        description:
          "How long a job waits in PREPARING for the client's uploads of inputs without a source (A-REX: 600 s), measured from entering PREPARING",
      }),
      userUploadPollSeconds: Type.Number({
        default: 5 * SECOND,
        exclusiveMinimum: 0,
        description: 'How often uploads are re-checked when no completion event arrives',
      }),
      allowFileUrls: Type.Boolean({
        default: false,
        description: 'Allow file:// sources (read with the service account: for sites whose users are all trusted)',
      }),
      highWaterMarkBytes: Type.Integer({
        default: 1 * MiB,
        minimum: 16 * 1024,
        maximum: 64 * MiB,
        description: 'Stream chunk size of transfers (1 MiB doubles throughput over the 64 KiB default)',
      }),
      removeUploadedOutputs: Type.Boolean({
        default: true,
        description: 'Delete an output from the session directory after its successful upload (A-REX does)',
      }),
      verifyUploads: Type.Boolean({
        default: true,
        description:
          "After an upload, compare the destination's size (HEAD) with the local file when the server reports it",
      }),
      cache,
      gfal2,
    },
    {
      default: {},
      additionalProperties: false,
      description: 'Data staging: inputs in (PREPARING), outputs out (FINISHING), cache (docs/data-staging.md)',
    },
  ),
};

export type StagingConfig = Readonly<Static<(typeof stagingSection)['staging']>>;
