/**
 * The job's own copy of its delegated credential, for jobs that move data themselves
 * (pilots): the proxy as `X509_USER_PROXY`, or the token as `BEARER_TOKEN_FILE`, in the
 * job's environment. One folder per job under `<state>/job-credentials/`:
 *
 *   job-credentials/          0711 root   passable, not listable
 *     <job id>/               0711 root   the job cannot add, rename or remove anything here
 *       proxy | token         0600 the job's account (the service's user without one)
 *       .delegation           0600 root   which delegation and owner, for a renewal after a restart
 *
 * The copy is replaced atomically (a new file given to the account, then renamed over
 * the old one) when the delegation is renewed, while the job is active; it is removed
 * when the job's batch run ends and when the job is cleaned. A job never reads the
 * service's delegation store itself (0700, docs/security.md).
 */
import { constants as C } from 'node:fs';
import { chmod, mkdir, open, readdir, readFile, rename, rm, unlink } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import type { DelegatedCredential } from '../vocabulary/delegations.js';
import type { AccountResolver } from './resolve-account.js';
import { ownerKeyOfStored } from '../pki/rfc4514.js';

export interface JobCredentialSource {
  /** The delegation's current credential when `owner` owns it and it is offered; else undefined. */
  credentialFor(delegationId: string, owner: string): Promise<DelegatedCredential | undefined>;
}

export interface JobCredentialLog {
  warn(obj: object, msg: string): void;
}

export const PROXY_VARIABLE = 'X509_USER_PROXY';
export const TOKEN_VARIABLE = 'BEARER_TOKEN_FILE';
const META = '.delegation';

interface Placed {
  readonly delegationId: string;
  readonly owner: string;
  readonly account: string | undefined;
}

const CERT = /-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----\n?/g;

/** The proxy file as GSI tools read it: the proxy certificate, its key, then the rest of the chain. */
export function proxyFileText(c: { certChainPem: string; keyPem: string }): string {
  const certs = (c.certChainPem.match(CERT) ?? []).map((b) => (b.endsWith('\n') ? b : `${b}\n`));
  const key = c.keyPem.endsWith('\n') ? c.keyPem : `${c.keyPem}\n`;
  return (certs[0] ?? '') + key + certs.slice(1).join('');
}

export class JobCredentials {
  readonly #dir: string;
  readonly #source: JobCredentialSource;
  readonly #accounts: AccountResolver;
  readonly #log: JobCredentialLog | undefined;
  /** delegation id → jobs holding a copy of it. */
  readonly #byDelegation = new Map<string, Set<string>>();
  readonly #placed = new Map<string, Placed>();
  /** Per job: one write at a time, in order. */
  readonly #chains = new Map<string, Promise<unknown>>();

  private constructor(
    dir: string,
    source: JobCredentialSource,
    accounts: AccountResolver,
    log: JobCredentialLog | undefined,
  ) {
    this.#dir = dir;
    this.#source = source;
    this.#accounts = accounts;
    this.#log = log;
  }

  /**
   * Opens (makes) the folder and learns the copies an earlier run placed, so renewals reach
   * them. A copy's temporary file a kill -9 left (`writeNew`: written, possibly given to the
   * account, not yet renamed) is removed: the folder is root's (0711), so what it holds is
   * the service's own, and the copy it was to replace is written again when the job is
   * placed or its delegation renewed. A job folder without its record is not remembered.
   */
  static async open(o: {
    dir: string;
    source: JobCredentialSource;
    accounts: AccountResolver;
    log?: JobCredentialLog;
  }): Promise<JobCredentials> {
    await mkdir(o.dir, { recursive: true, mode: 0o711 });
    await chmod(o.dir, 0o711);
    const c = new JobCredentials(o.dir, o.source, o.accounts, o.log);
    for (const id of await readdir(o.dir)) {
      await removeTemporaries(join(o.dir, id));
      const meta = await readFile(join(o.dir, id, META), 'utf8').catch(() => undefined);
      const [delegationId, owner, account] = meta?.split('\n') ?? [];
      // A file written before owners were keyed on the RFC 4514 form names the one-line DN.
      if (delegationId && owner)
        c.#remember(id, { delegationId, owner: ownerKeyOfStored(owner), account: account || undefined });
    }
    return c;
  }

  /**
   * Places the job's copy of `delegationId` (owned by `owner`) for `account` (absent: the
   * service's user) and returns the environment entries naming it; none when the job
   * has no delegation or it holds no usable credential now.
   */
  async place(
    jobId: string,
    delegationId: string | null,
    owner: string,
    account: string | undefined,
  ): Promise<{ name: string; value: string }[]> {
    if (delegationId === null) return [];
    const p: Placed = { delegationId, owner, account };
    // Known before the write: a renewal arriving meanwhile rewrites the copy after it.
    this.#remember(jobId, p);
    const written = await this.#serial(jobId, () => this.#write(jobId, p)).catch((e: unknown) => {
      this.#forget(jobId);
      throw e;
    });
    if (written === undefined) {
      this.#forget(jobId);
      return [];
    }
    return [{ name: written.kind === 'x509' ? PROXY_VARIABLE : TOKEN_VARIABLE, value: written.path }];
  }

  /** The delegation was renewed: every job holding a copy of it gets the new credential. */
  async refresh(delegationId: string): Promise<void> {
    const jobs = [...(this.#byDelegation.get(delegationId) ?? [])];
    await Promise.all(
      jobs.map((jobId) =>
        this.#serial(jobId, async () => {
          const p = this.#placed.get(jobId);
          if (p === undefined || p.delegationId !== delegationId) return; // removed meanwhile
          await this.#write(jobId, p).catch((e: unknown) =>
            this.#log?.warn({ err: e, job: jobId, delegation: delegationId }, "cannot refresh a job's credential copy"),
          );
        }),
      ),
    );
  }

  /** The job no longer runs (or is cleaned): its copy goes. */
  async remove(jobId: string): Promise<void> {
    await this.#serial(jobId, async () => {
      this.#forget(jobId);
      await rm(join(this.#dir, jobId), { recursive: true, force: true });
    });
  }

  #forget(jobId: string): void {
    const p = this.#placed.get(jobId);
    this.#placed.delete(jobId);
    if (p) this.#byDelegation.get(p.delegationId)?.delete(jobId);
  }

  #remember(jobId: string, p: Placed): void {
    const old = this.#placed.get(jobId);
    if (old) this.#byDelegation.get(old.delegationId)?.delete(jobId);
    this.#placed.set(jobId, p);
    let set = this.#byDelegation.get(p.delegationId);
    if (!set) this.#byDelegation.set(p.delegationId, (set = new Set()));
    set.add(jobId);
  }

  #serial<T>(jobId: string, fn: () => Promise<T>): Promise<T> {
    const prev = this.#chains.get(jobId) ?? Promise.resolve();
    const next = prev.then(fn, fn);
    const tail = next.catch(() => undefined);
    this.#chains.set(jobId, tail);
    void tail.then(() => {
      if (this.#chains.get(jobId) === tail) this.#chains.delete(jobId);
    });
    return next;
  }

  async #write(jobId: string, p: Placed): Promise<{ kind: DelegatedCredential['kind']; path: string } | undefined> {
    const cred = await this.#source.credentialFor(p.delegationId, p.owner);
    if (cred === undefined) return undefined;
    const owner = p.account === undefined ? undefined : await this.#accounts.resolve(p.account);
    const dir = join(this.#dir, jobId);
    await mkdir(dir, { recursive: true, mode: 0o711 });
    await writeNew(dir, META, `${p.delegationId}\n${p.owner}\n${p.account ?? ''}\n`, undefined);
    const name = cred.kind === 'x509' ? 'proxy' : 'token';
    await writeNew(dir, name, cred.kind === 'x509' ? proxyFileText(cred) : cred.token, owner);
    return { kind: cred.kind, path: join(dir, name) };
  }
}

/** The temporary name `writeNew` gives a file before renaming it into place. */
const TEMPORARY = /^\.(?:proxy|token|\.delegation)\.[0-9a-f]{12}\.tmp$/;

/** Removes the temporaries `writeNew` left in a job's folder (unlinked, never followed). */
async function removeTemporaries(dir: string): Promise<void> {
  const names = await readdir(dir).catch(() => [] as string[]);
  for (const n of names) if (TEMPORARY.test(n)) await unlink(join(dir, n)).catch(() => undefined);
}

/** Writes `name` in `dir` (the service's own folder) as a new 0600 file, given to `owner`, renamed into place. */
async function writeNew(
  dir: string,
  name: string,
  text: string,
  owner: { uid: number; gid: number } | undefined,
): Promise<void> {
  const tmp = join(dir, `.${name}.${randomBytes(6).toString('hex')}.tmp`);
  const fh = await open(tmp, C.O_WRONLY | C.O_CREAT | C.O_EXCL | C.O_NOFOLLOW, 0o600);
  try {
    await fh.writeFile(text);
    if (owner !== undefined) await fh.chown(owner.uid, owner.gid);
    await fh.chmod(0o600);
  } catch (e) {
    await fh.close();
    await unlink(tmp).catch(() => undefined);
    throw e;
  }
  await fh.close();
  await rename(tmp, join(dir, name));
}
