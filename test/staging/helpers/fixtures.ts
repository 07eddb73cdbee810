/**
 * Shared pieces of the staging tests: configuration with short delays, a logger
 * that records what it is given (to check that secrets never reach it), temporary
 * directories, the development PKI, and credential sources.
 */
import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildConfig } from '../../../src/config/load.js';
import type { StagingConfig } from '../../../src/config/sections/staging.js';
import { addDevUser, initDevPki } from '../../../src/pki/dev-pki.js';
import type { Credential, CredentialSource, X509Credential } from '../../../src/staging/credentials.js';
import type { StagingLogger } from '../../../src/staging/logger.js';

type DeepPartial<T> = { -readonly [K in keyof T]?: T[K] extends object ? DeepPartial<T[K]> : T[K] };

/** Staging config with fast retries; `over` is merged per section. */
export function stagingConfig(over: DeepPartial<StagingConfig> = {}): StagingConfig {
  const base: DeepPartial<StagingConfig> = {
    retry: { maxAttempts: 4, initialDelaySeconds: 0.01, maxDelaySeconds: 0.05, multiplier: 2 },
    timeouts: { connectSeconds: 10, headersSeconds: 20, idleSeconds: 20 },
    userUploadPollSeconds: 0.05,
  };
  const merged: Record<string, unknown> = { ...base, ...over };
  for (const k of ['retry', 'timeouts', 'cache'] as const) {
    merged[k] = { ...base[k], ...over[k] };
  }
  return buildConfig({ staging: merged }).staging;
}

export interface LogLine {
  level: string;
  obj: object;
  msg: string | undefined;
}

export function recordingLogger(): StagingLogger & { lines: LogLine[]; text(): string } {
  const lines: LogLine[] = [];
  const at =
    (level: string) =>
    (obj: object, msg?: string): void => {
      lines.push({ level, obj, msg });
    };
  return {
    lines,
    debug: at('debug'),
    info: at('info'),
    warn: at('warn'),
    error: at('error'),
    text: () => JSON.stringify(lines),
  };
}

export async function tempDir(
  t: { after: (fn: () => Promise<void>) => void },
  prefix = 'ceres-staging-',
): Promise<string> {
  const d = await mkdtemp(join(tmpdir(), prefix));
  t.after(() => rm(d, { recursive: true, force: true }));
  return d;
}

/** An empty session directory of its own (a folder inside a fresh temporary one), removed after the test. */
export async function sessionDirFor(t: { after: (fn: () => Promise<void>) => void }): Promise<string> {
  const d = join(await tempDir(t), 'session');
  await mkdir(d);
  return d;
}

export interface TestPki {
  readonly caPem: string;
  readonly hostCert: string;
  readonly hostKey: string;
  /** Proxy chain of the default user (CN `Ceres Dev User`). */
  readonly alice: X509Credential;
  /** Proxy chain of a second user (CN `bob`). */
  readonly bob: X509Credential;
}

/** A throw-away PKI from the project's development PKI (CA, host cert for localhost, two users' proxies). */
export async function makePki(dir: string): Promise<TestPki> {
  const pki = await initDevPki(join(dir, 'pki'));
  const bob = await addDevUser(pki.dir, 'bob');
  const read = (p: string): Promise<string> => readFile(p, 'utf8');
  return {
    caPem: await read(pki.files.caCert),
    hostCert: await read(pki.files.hostCert),
    hostKey: await read(pki.files.hostKey),
    alice: proxyCredential(await read(pki.files.userProxy)),
    bob: proxyCredential(await read(bob.proxyFile)),
  };
}

/** Split an arcproxy-style file (proxy cert, proxy key, issuer certs) into chain and key. */
export function proxyCredential(text: string): X509Credential {
  const blocks = text.match(/-----BEGIN [A-Z ]+-----[\s\S]+?-----END [A-Z ]+-----\n?/g) ?? [];
  const certs = blocks.filter((b) => b.includes('CERTIFICATE'));
  const key = blocks.find((b) => b.includes('PRIVATE KEY'));
  if (key === undefined) throw new Error('no key in proxy file');
  return { kind: 'x509', certChainPem: certs.join(''), keyPem: key };
}

/** A credential source backed by a map (delegation id -> credential), recording calls. */
export function mapCredentials(
  map: Record<string, Credential | undefined>,
  byOwner: Record<string, Credential | undefined> = {},
): CredentialSource & { calls: { delegationId: string | undefined; owner: string }[] } {
  const calls: { delegationId: string | undefined; owner: string }[] = [];
  return {
    calls,
    credentialFor: (delegationId, owner) => {
      calls.push({ delegationId, owner });
      return Promise.resolve(delegationId === undefined ? byOwner[owner] : map[delegationId]);
    },
  };
}

export const never = new AbortController().signal;
