/**
 * Every check of a loaded configuration against this host, in one list that both
 * `ceres serve` (the start refuses on its problems, src/service/start.ts) and
 * `ceres admin config check` (it prints them all) run: a mistake the check passes would
 * otherwise surface only later, some as failing jobs. Each check is a named function of
 * (configuration, host) returning problems under the key that causes them; a check never
 * changes anything. What is checked at load (schema, values, cross-references, the
 * authorization rules) is src/config/load.ts; what needs the state directory's lock is
 * the start's alone.
 */
import { readFile } from 'node:fs/promises';
import { createPrivateKey, X509Certificate } from 'node:crypto';
import type { Config } from '../config/schema.js';
import type { AccountResolver } from '../accounts/resolve-account.js';
import { unreadablePath } from '../config/path-problems.js';
import { routeProblems } from '../jobs/routes.js';
import { routeLimitProblems } from '../jobs/route-limits.js';
import { s3KeyFileProblems } from '../staging/gfal2/s3-endpoints.js';
import { accountProblems, sessionsReachProblems } from './account-checks.js';
import { describeProblem, type HostProblem } from './host-problem.js';

export interface CheckHost {
  /**
   * Whether the service runs as root (jobs then run as mapped or default accounts). The
   * check cannot know the user the service will run as and assumes root, as a mapping
   * requires.
   */
  readonly root: boolean;
  /** Local accounts by name with the configuration's policy (accounts.minUid). */
  readonly resolver: AccountResolver;
  /** The service's environment (PATH, SLURM_CONF). */
  readonly env: NodeJS.ProcessEnv;
}

export interface ConfigCheck {
  readonly name: string;
  run(c: Config, host: CheckHost): HostProblem[] | Promise<HostProblem[]>;
}

/** A path key naming a file or folder that must be readable; undefined: not set. */
function need(key: string, path: string | undefined, kind: 'file' | 'dir' = 'file'): HostProblem[] {
  const why = path === undefined ? undefined : unreadablePath(path, kind);
  return why === undefined ? [] : [{ key, message: `${path}: ${why}` }];
}

/** The host certificate and key: readable, parseable, and a pair (the listener would not start). */
async function tlsProblems(c: Config): Promise<HostProblem[]> {
  const t = c.tls;
  const missing = [
    ...need('tls.hostCert', t.hostCert),
    ...need('tls.hostKey', t.hostKey),
    ...need('tls.caDir', t.caDir, 'dir'),
  ];
  if (missing.length > 0 || t.hostCert === undefined || t.hostKey === undefined) return missing;
  let cert: X509Certificate;
  try {
    cert = new X509Certificate(await readFile(t.hostCert));
  } catch (e) {
    return [{ key: 'tls.hostCert', message: `${t.hostCert}: not a PEM certificate (${(e as Error).message})` }];
  }
  try {
    const key = createPrivateKey(await readFile(t.hostKey));
    if (!cert.checkPrivateKey(key))
      return [{ key: 'tls.hostKey', message: `${t.hostKey} is not the key of the certificate ${t.hostCert}` }];
  } catch (e) {
    return [
      { key: 'tls.hostKey', message: `${t.hostKey}: not an unencrypted PEM private key (${(e as Error).message})` },
    ];
  }
  return [];
}

/** Grid-mapfiles of the authorization rules and of the mapping: a missing one maps and admits nobody. */
function gridMapFileProblems(c: Config): HostProblem[] {
  const out: HostProblem[] = [];
  c.authorization?.groups.forEach((g, i) =>
    g.match.forEach((r, j) => out.push(...need(`authorization.groups.${i}.match.${j}.gridMapFile`, r.gridMapFile))),
  );
  c.mapping.forEach((m, i) => out.push(...need(`mapping.${i}.gridMapFile`, m.gridMapFile)));
  return out.map((p) => ({ ...p, message: `${p.message}: the grid-mapfile must be readable by the service` }));
}

/** Issuers' key files: a token of the issuer could not be verified. */
async function jwksProblems(c: Config): Promise<HostProblem[]> {
  const out: HostProblem[] = [];
  for (const [i, iss] of c.tokens.issuers.entries()) {
    if (iss.jwksFile === undefined) continue;
    const key = `tokens.issuers.${i}.jwksFile`;
    const missing = need(key, iss.jwksFile);
    if (missing.length > 0) {
      out.push(...missing);
      continue;
    }
    // Loaded only when a key file is configured: a service without token issuers never loads
    // the JOSE library (test/e2e/lazy-modules).
    const { jwksFileProblem } = await import('../auth/token/issuer-keys.js');
    const why = jwksFileProblem(await readFile(iss.jwksFile, 'utf8'));
    if (why !== undefined) out.push({ key, message: `${iss.jwksFile}: ${why}` });
  }
  return out;
}

/**
 * The VOMS trust directory: a folder that exists but cannot be read is a mistake; an
 * absent one turns VOMS attributes off, which the `voms` rules of the authorization
 * section would then never match (a warning: the site may run without VOMS for now).
 */
function vomsProblems(c: Config): HostProblem[] {
  const why = unreadablePath(c.vomsDir, 'dir');
  if (why === undefined) return [];
  const rules = (c.authorization?.groups ?? []).flatMap((g) => g.match.filter((r) => r.voms !== undefined));
  if (why !== 'does not exist') return [{ key: 'vomsDir', message: `${c.vomsDir}: ${why}` }];
  if (rules.length === 0) return [];
  return [
    {
      key: 'vomsDir',
      message: `${c.vomsDir} does not exist, so no VOMS attribute is verified and the ${rules.length} voms rule(s) of the authorization section match nobody: install the <vo>/<host>.lsc files there, or name the folder that holds them`,
      warning: true,
    },
  ];
}

/** The checks, in the order their problems are printed. */
export const CONFIG_CHECKS: readonly ConfigCheck[] = [
  { name: 'accounts', run: (c, h) => accountProblems(c, h) },
  {
    name: 'sessions folder',
    run: (c, h) =>
      sessionsReachProblems(
        { mapping: c.mapping, stateDir: c.stateDir, sessionsRoot: c.sessions.root, defaultAccount: c.accounts.default },
        h,
      ),
  },
  { name: 'tls', run: tlsProblems },
  {
    name: 'runtime environments',
    run: (c) =>
      c.cluster.runtimeEnvironments.flatMap((r, i) => need(`cluster.runtimeEnvironments.${i}.script`, r.script)),
  },
  { name: 'grid-mapfiles', run: gridMapFileProblems },
  { name: 'token issuers', run: jwksProblems },
  { name: 'voms', run: vomsProblems },
  // The S3 endpoints' key files: readable, not empty, 0600 at most.
  { name: 's3 keys', run: (c) => s3KeyFileProblems(c.staging.gfal2.s3Endpoints) },
  {
    name: 'routes',
    run: (c) => [
      ...routeProblems(
        c.routes,
        c.cluster.queues.map((q) => q.name),
      ),
      ...routeLimitProblems(c),
    ],
  },
  {
    name: 'batch system',
    // Loaded only for a Slurm site: the fork default never loads the Slurm backend's modules
    // (test/e2e/lazy-modules).
    run: async (c, h) =>
      c.lrms.backend === 'slurm' ? slurmProblems(c, h) : c.lrms.backend === 'kubernetes' ? kubernetesProblems(c) : [],
  },
];

/**
 * The Slurm commands and configuration; then, when they are there and routes name batch
 * names, those names against what Slurm knows (asking only when the commands can run).
 */
async function slurmProblems(c: Config, h: CheckHost): Promise<HostProblem[]> {
  const { slurmHostProblems, slurmRouteProblems } = await import('../lrms/slurm/host-problems.js');
  const host = slurmHostProblems(c.lrms.slurm, h.env);
  if (host.length > 0) return host;
  return slurmRouteProblems(c.routes, c.lrms.slurm, h.env);
}

/**
 * What the Kubernetes backend refuses at its start (no mount path for the session volume), and a
 * kubeconfig file it could not read, named before the start rather than by it.
 */
function kubernetesProblems(c: Config): HostProblem[] {
  const k = c.lrms.kubernetes;
  const out: HostProblem[] = [];
  if (k.volume.mountPath === '')
    out.push({
      key: 'lrms.kubernetes.volume.mountPath',
      message:
        'empty: name where the pods see the session directories (the folder of the session directories, at the same path as on this host)',
    });
  // Empty: the in-cluster service account, KUBECONFIG or ~/.kube/config, found by the client.
  if (k.kubeconfig !== '') out.push(...need('lrms.kubernetes.kubeconfig', k.kubeconfig));
  return out;
}

/** Every check's problems, in order; a check that throws is a problem of its own (never skipped silently). */
export async function runConfigChecks(c: Config, host: CheckHost): Promise<HostProblem[]> {
  const out: HostProblem[] = [];
  for (const check of CONFIG_CHECKS) {
    try {
      out.push(...(await check.run(c, host)));
    } catch (e) {
      out.push({ key: '', message: `the ${check.name} check failed: ${e instanceof Error ? e.message : String(e)}` });
    }
  }
  return out;
}

/** The start's refusal: every problem that is not a warning, one per line. */
export function refusal(problems: readonly HostProblem[]): string | undefined {
  const errors = problems.filter((p) => p.warning !== true);
  if (errors.length === 0) return undefined;
  return [
    'the configuration cannot work on this host (`ceres admin config check` lists the same):',
    ...errors.map((p) => `  ${describeProblem(p)}`),
  ].join('\n');
}
