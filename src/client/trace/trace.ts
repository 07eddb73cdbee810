/**
 * `ceres trace URL`: a CE tested end to end with the caller's own credential, one
 * step after the other (./step.ts lists them), each timed and judged; the first
 * failure ends the trace, naming its step, the reason and a remedy where one is known.
 * A job the trace made is cleaned even when a later step failed, unless the service
 * stopped answering (then the report names the job left behind).
 */
import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { signProxyFromCsr } from '../../pki/issue.js';
import { loadTrustStore } from '../../pki/trust-store.js';
import { findCredential, iso, timeLeft, CredentialProblem, type Credential } from '../credentials.js';
import { RestClient } from '../rest-client.js';
import { objectsOf, parseJson, serviceInfo, versionsOf, type ServiceInfo } from '../rest-answers.js';
import { probeTls } from '../tls-probe.js';
import { answerReason, expectStatus } from './http-judgement.js';
import {
  ERROR_FILE,
  OUTPUT_FILE,
  activityOf,
  cleanJob,
  errorLog,
  killJob,
  followJob,
  jobFacts,
  sessionFile,
  submitJob,
  traceJobXrsl,
  type StateChange,
} from './trace-job.js';
import { StepFailure, StepSkipped, runStep, type StepName, type StepResult } from './step.js';

/** The interface versions the trace speaks, preferred first. */
const VERSIONS = ['1.1', '1.0'] as const;
const DEFAULT_CA_DIR = '/etc/grid-security/certificates';

export interface TraceOptions {
  readonly url: string;
  readonly queue?: string | undefined;
  readonly tokenFile?: string | undefined;
  readonly caDir?: string | undefined;
  /** The most any one step may take (following the job included). */
  readonly timeoutMs: number;
  /** Relations added to the trace's jobs (`--xrsl`). */
  readonly xrsl?: string | undefined;
  readonly env: NodeJS.ProcessEnv;
  readonly uid: number;
  readonly onStep?: (r: StepResult) => void;
  /** A state change of the dry-run job or of the job, as the trace follows it. */
  readonly onState?: (job: { readonly id: string; readonly dryRun: boolean }, s: StateChange) => void;
}

export interface TraceReport {
  readonly url: string;
  readonly ok: boolean;
  readonly version: string | undefined;
  /** The failed step, its reason and remedy; absent when the trace passed. */
  readonly failure?: { readonly step: StepName; readonly reason: string; readonly remedy?: string };
  readonly steps: readonly StepResult[];
  readonly job?: {
    readonly id: string;
    readonly states: readonly StateChange[];
    readonly exitCode?: string;
    readonly localOwner?: string;
    /** The job could not be cleaned: it is still on the CE. */
    readonly leftOnCe?: boolean;
  };
  readonly ms: number;
}

export async function runTrace(o: TraceOptions): Promise<TraceReport> {
  const t0 = performance.now();
  const url = new URL(o.url);
  const where = url.host;
  const steps: StepResult[] = [];
  let failed: StepResult | undefined;
  let cred: Credential | undefined;
  let caPems: readonly string[] = [];
  let client: RestClient | undefined;
  let identity = '?';
  let info: ServiceInfo | undefined;
  let queue = '';
  let delegationId: string | undefined;
  let jobId: string | undefined;
  let states: StateChange[] = [];
  let exitCode: string | undefined;
  let localOwner: string | undefined;
  let leftOnCe = false;
  /** The trace's job reached a final state (else it is killed, not cleaned). */
  let jobEnded = false;
  const marker = `ceres-trace ${randomBytes(8).toString('hex')}`;
  const caDir = o.caDir ?? nonEmpty(o.env.X509_CERT_DIR) ?? DEFAULT_CA_DIR;

  /** Runs a step unless one failed before; records it. */
  const step = async (name: StepName, body: (signal: AbortSignal) => Promise<string>): Promise<boolean> => {
    if (failed !== undefined) return false;
    const r = await runStep(name, o.timeoutMs, where, body);
    steps.push(r);
    o.onStep?.(r);
    if (r.status === 'failed') failed = r;
    return r.status === 'ok';
  };
  const c = (): RestClient => client as RestClient;

  await step('credentials', () => {
    try {
      cred = findCredential({ tokenFile: o.tokenFile, env: o.env, uid: o.uid });
    } catch (e) {
      if (e instanceof CredentialProblem) throw new StepFailure(e.message, e.remedy);
      throw e;
    }
    const now = new Date();
    if (cred.kind === 'proxy') {
      identity = cred.identity;
      const voms = cred.fqans.length === 0 ? 'no VOMS attributes' : `VOMS ${cred.fqans.join(' ')}`;
      return Promise.resolve(
        `proxy ${cred.path} (${cred.source}) of ${cred.identity}: ${timeLeft(cred.notAfter, now)} left, ${voms}`,
      );
    }
    const cl = cred.claims;
    identity = `token subject ${cl.sub ?? '?'} of ${cl.iss ?? '?'}`;
    const expiry = cl.exp === undefined ? 'no expiry' : `${timeLeft(new Date(cl.exp * 1000), now)} left`;
    const groups = cl.groups === undefined ? '' : `, groups ${cl.groups.join(' ')}`;
    return Promise.resolve(
      `bearer token from ${cred.source}: issuer ${cl.iss ?? '?'}, subject ${cl.sub ?? '?'}, scopes ${cl.scope ?? '(none)'}${groups}, ${expiry}`,
    );
  });

  await step('tls', async (signal) => {
    if (url.protocol !== 'https:')
      throw new StepFailure(`the URL ${o.url} is not https://`, 'use https://HOST:PORT/arex');
    try {
      caPems = loadTrustStore(caDir).pems;
    } catch (e) {
      throw new StepFailure(
        `no usable CA certificate in ${caDir}: ${e instanceof Error ? e.message : String(e)}`,
        'install the IGTF CA bundle there, or pass the CA directory with --ca-dir (or X509_CERT_DIR)',
      );
    }
    const p = await probeTls({
      host: url.hostname.replace(/^\[|\]$/g, ''),
      port: Number(url.port || 443),
      caPems,
      proxyPem: cred?.kind === 'proxy' ? cred.pem : undefined,
      signal,
    });
    if (!p.trusted)
      throw new StepFailure(
        `the server certificate ${p.subject}, issued by ${p.issuer}, is not trusted by the CAs in ${caDir} (${p.trustError ?? 'untrusted'})`,
        `put the CA certificate of ${p.issuer} into ${caDir}, or pass the CA directory that holds it with --ca-dir (or X509_CERT_DIR)`,
      );
    if (p.nameError !== undefined)
      throw new StepFailure(
        `the server certificate ${p.subject} does not name ${url.hostname}: ${p.nameError}`,
        'use the host name of the certificate in the URL (before DNS points there, map it in /etc/hosts on this client)',
      );
    client = new RestClient(
      o.url,
      cred?.kind === 'proxy' ? { proxyPem: cred.pem } : { token: cred?.token ?? '' },
      caPems,
    );
    return `${p.protocol}, server ${p.subject} issued by ${p.issuer} (trusted in ${caDir}), valid until ${iso(p.validTo)}, names ${url.hostname}`;
  });

  await step('interface', async (signal) => {
    const a = await c().request('GET', `${c().servicePath}/rest`, { signal });
    // Ceres refuses a certificate it cannot verify on every request, public ones included.
    if (a.status === 401) {
      try {
        expectStatus(a, [200], `GET ${url.pathname.replace(/\/+$/, '')}/rest`, identity);
      } catch (e) {
        if (e instanceof StepFailure) throw new StepFailure(e.message, e.remedy, false, 'authentication');
        throw e;
      }
    }
    if (a.status !== 200)
      throw new StepFailure(
        `GET ${url.pathname.replace(/\/+$/, '')}/rest: ${answerReason(a)}: no ARC REST interface at ${o.url}`,
        'give the service URL, e.g. https://ce.example.org:443/arex',
      );
    const offered = versionsOf(a.body.toString('utf8'));
    const version = VERSIONS.find((v) => offered.includes(v));
    if (version === undefined)
      throw new StepFailure(
        `the service offers REST interface versions ${offered.join(', ') || '(none)'}; the trace speaks ${VERSIONS.join(', ')}`,
      );
    c().version = version;
    return `REST ${version} (offered: ${offered.join(', ')})`;
  });

  let listing: Awaited<ReturnType<RestClient['rest']>> | undefined;
  await step('authentication', async (signal) => {
    listing = await c().rest('GET', 'jobs', { signal });
    if (listing.status === 401) expectStatus(listing, [200], 'GET jobs', identity);
    return `the service accepts ${identity}`;
  });

  await step('authorization', () => {
    const a = expectStatus(listing as NonNullable<typeof listing>, [200, 204], 'GET jobs', identity);
    const n = objectsOf(parseJson(a.body.toString('utf8'))?.job).length;
    return Promise.resolve(`the service admits ${identity} (${n} job${n === 1 ? '' : 's'} of this identity listed)`);
  });

  await step('info', async (signal) => {
    const a = expectStatus(await c().rest('GET', 'info', { signal }), [200], 'GET info', identity);
    info = serviceInfo(parseJson(a.body.toString('utf8')));
    const shares = info.shares
      .map(
        (s) =>
          `${s.name}${s.queue === s.name ? '' : ` (queue ${s.queue})`}${s.policies.length ? ` for ${s.policies.join(' ')}` : ''}`,
      )
      .join(', ');
    const access = info.accessPolicies.length ? `; access ${info.accessPolicies.join(' ')}` : '';
    return `${info.implementation ?? 'unknown implementation'} "${info.name ?? '?'}", health ${info.healthState ?? '?'}, serving ${info.servingState ?? '?'}; shares: ${shares || '(none)'}${access}`;
  });

  await step('queue', () => {
    const shares = info?.shares ?? [];
    const names = [...new Set(shares.map((s) => s.queue))];
    if (o.queue !== undefined) {
      const share = shares.find((s) => s.queue === o.queue || s.name === o.queue);
      if (share === undefined)
        throw new StepFailure(
          `the info document publishes no queue ${o.queue}`,
          names.length > 0 ? `choose one of: ${names.join(', ')}` : 'ask the site which queue to use',
        );
      queue = share.queue;
      return Promise.resolve(`${queue} (asked for)${servingNote(share.servingState)}`);
    }
    // A share with a MappingPolicy is for some VOs only; one without is for every caller.
    const share = shares.find((s) => s.policies.length === 0) ?? shares[0];
    if (share === undefined)
      throw new StepFailure('the info document publishes no queue (no ComputingShare)', 'name the queue with --queue');
    queue = share.queue;
    return Promise.resolve(
      `${queue} (the first published${shares.length > 1 ? ` of ${names.join(', ')}` : ''})${servingNote(share.servingState)}`,
    );
  });

  await step('dry-run', async (signal) => {
    const id = await submitJob(c(), traceJobXrsl({ marker, queue, dryRun: true, extra: o.xrsl }), identity, signal);
    const end = await followJob(c(), id, identity, signal, (s) => o.onState?.({ id, dryRun: true }, s));
    const facts = jobFacts(await activityOf(c(), id, identity, signal));
    const cleaned = await cleanJob(c(), id, signal);
    const mapped = facts.localOwner === undefined ? '' : `, mapped to ${facts.localOwner}`;
    const said = facts.errors.length ? `: ${facts.errors.join('; ')}` : '';
    const clean =
      cleaned.status >= 200 && cleaned.status < 300 ? 'cleaned' : `not cleaned (${cleaned.status} ${cleaned.reason})`;
    return `accepted as ${id} in queue ${facts.queue ?? queue}${mapped}; ended ${end.state}${said}; ${clean}`;
  });

  await step('delegation', async (signal) => {
    if (cred?.kind === 'proxy') {
      const a = expectStatus(
        await c().rest('POST', 'delegations?action=new', { accept: '', signal }),
        [201],
        'POST delegations?action=new',
        identity,
      );
      const loc = a.headers.location;
      const id = (Array.isArray(loc) ? loc[0] : loc)?.replace(/\/+$/, '').split('/').pop();
      const csr = a.body.toString('utf8');
      if (id === undefined || id === '' || !csr.includes('BEGIN CERTIFICATE REQUEST'))
        throw new StepFailure('POST delegations?action=new answered 201 without a Location or a certificate request');
      const signed = await signProxyFromCsr(csr, cred.pem, cred.pem);
      expectStatus(
        await c().rest('PUT', `delegations/${encodeURIComponent(id)}`, { body: signed.chainPem, accept: '', signal }),
        [200, 201, 204],
        `PUT delegations/${id}`,
        identity,
      );
      delegationId = id;
      return `delegation ${id}: a proxy of ${cred.identity} until ${iso(signed.cert.notAfter)}`;
    }
    if (c().version === '1.0') throw new StepSkipped('REST 1.0 has no token delegation: the job runs without one');
    const a = expectStatus(
      await c().rest('POST', 'delegations?action=new&type=jwt', {
        accept: '',
        headers: { 'x-delegation': `bearer ${cred?.token ?? ''}` },
        signal,
      }),
      [200, 201],
      'POST delegations?action=new&type=jwt',
      identity,
    );
    const loc = a.headers.location;
    delegationId = (Array.isArray(loc) ? loc[0] : loc)?.replace(/\/+$/, '').split('/').pop();
    return `token delegation ${delegationId ?? '?'}`;
  });

  await step('submit', async (signal) => {
    jobId = await submitJob(c(), traceJobXrsl({ marker, queue, delegationId, extra: o.xrsl }), identity, signal);
    return `job ${jobId} (${o.url.replace(/\/+$/, '')}/rest/${c().version}/jobs/${jobId})`;
  });

  await step('run', async (signal) => {
    const id = jobId as string;
    const end = await followJob(c(), id, identity, signal, (s) => {
      states.push(s);
      o.onState?.({ id, dryRun: false }, s);
    });
    states = end.changes;
    jobEnded = true;
    const facts = jobFacts(await activityOf(c(), id, identity, signal));
    exitCode = facts.exitCode;
    localOwner = facts.localOwner;
    const ran = `${facts.localOwner === undefined ? '' : ` as ${facts.localOwner}`}${facts.node === undefined ? '' : ` on ${facts.node}`}`;
    if (end.state !== 'FINISHED') {
      const log = await errorLog(c(), id, signal).catch(() => []);
      const stderr = await sessionFile(c(), id, ERROR_FILE, signal).catch(() => undefined);
      const parts = [
        ...facts.errors,
        ...(stderr?.status === 200 && stderr.text.trim() !== '' ? [`stderr: ${stderr.text.trim().slice(0, 500)}`] : []),
        ...log.map((l) => `log: ${l}`),
      ];
      throw new StepFailure(
        `job ${id} ended ${end.state}${facts.exitCode === undefined ? '' : ` with exit code ${facts.exitCode}`}${ran}${parts.length ? `: ${parts.join('; ')}` : ''}`,
        end.state === 'KILLED'
          ? 'the job was cancelled, or killed over a limit: ask the site (ceres admin show JOBID on the CE)'
          : "the job's errors are above; on the CE, ceres admin show JOBID shows its whole history",
      );
    }
    return `FINISHED${facts.exitCode === undefined ? '' : ` with exit code ${facts.exitCode}`}${ran}, queue ${facts.queue ?? queue}`;
  });

  await step('output', async (signal) => {
    const f = await sessionFile(c(), jobId as string, OUTPUT_FILE, signal);
    if (f.status !== 200) throw new StepFailure(`GET session/${OUTPUT_FILE}: HTTP ${f.status}`);
    if (f.text !== `${marker}\n`)
      throw new StepFailure(
        `${OUTPUT_FILE} holds ${JSON.stringify(f.text.slice(0, 80))}, not the ${JSON.stringify(`${marker}\n`)} the job wrote`,
      );
    return `${OUTPUT_FILE}: ${f.text.length} bytes, as the job wrote them`;
  });

  // The job is cleaned after a failure too, unless the service stopped answering.
  const cleanAfter = failed === undefined || failed.transport !== true;
  if (jobId !== undefined || delegationId !== undefined) {
    if (cleanAfter) {
      const failedBefore = failed;
      failed = undefined;
      await step('clean', async (signal) => {
        const done: string[] = [];
        if (jobId !== undefined && !jobEnded) {
          // A job still in progress (the run step ran out of time) cannot be cleaned yet: it is
          // killed, and left for the CE's lifetime sweep (or arcclean) once it is KILLED.
          await killJob(c(), jobId, signal);
          leftOnCe = true;
          done.push(`killed job ${jobId} (it was not finished; the CE removes it when its lifetime ends)`);
        } else if (jobId !== undefined) {
          const r = await cleanJob(c(), jobId, signal);
          if (r.status < 200 || r.status >= 300) {
            leftOnCe = true;
            throw new StepFailure(`POST jobs?action=clean: job ${jobId}: ${r.status} ${r.reason}`);
          }
          done.push(`removed job ${jobId}`);
        }
        if (delegationId !== undefined && jobId !== undefined && !jobEnded) {
          // A CE keeps a delegation that a job in progress uses (Ceres answers 409).
          done.push(`kept delegation ${delegationId} for it (delete it once the job has ended)`);
        } else if (delegationId !== undefined) {
          const a = await c().rest('POST', `delegations/${encodeURIComponent(delegationId)}?action=delete`, {
            accept: '',
            signal,
          });
          if (a.status < 200 || a.status >= 300)
            throw new StepFailure(`POST delegations/${delegationId}?action=delete: ${answerReason(a)}`);
          done.push(`removed delegation ${delegationId}`);
        }
        return done.join('; ');
      });
      if (failedBefore !== undefined) failed = failedBefore;
    } else if (jobId !== undefined) leftOnCe = true;
  }
  await client?.close();

  const job =
    jobId === undefined
      ? undefined
      : {
          id: jobId,
          states,
          ...(exitCode === undefined ? {} : { exitCode }),
          ...(localOwner === undefined ? {} : { localOwner }),
          ...(leftOnCe ? { leftOnCe: true } : {}),
        };
  const f = failed ?? steps.find((s) => s.status === 'failed');
  return {
    url: o.url,
    ok: f === undefined,
    version: client?.version,
    ...(f === undefined
      ? {}
      : { failure: { step: f.step, reason: f.detail, ...(f.remedy === undefined ? {} : { remedy: f.remedy }) } }),
    steps,
    ...(job === undefined ? {} : { job }),
    ms: performance.now() - t0,
  };
}

function nonEmpty(v: string | undefined): string | undefined {
  return v === undefined || v.trim() === '' ? undefined : v;
}

function servingNote(state: string | undefined): string {
  return state === undefined || state === 'production' ? '' : `; serving state ${state}: it may accept no jobs`;
}
