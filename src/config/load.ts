/**
 * Load the configuration once: JSON file (optional) + command-line overrides, defaults
 * filled from the schema, validated, paths resolved, deep-frozen. Every error names
 * the offending key. No I/O happens at import time; the caller (the CLI) decides
 * what to do with a ConfigError.
 */
import { readFileSync } from 'node:fs';
import { resolve, dirname } from 'node:path';
import { Value, type ValueError } from '@sinclair/typebox/value';
import { ConfigSchema, type Config } from './schema.js';
import { checkAuthorizationConfig } from './authorization-check.js';
import { resolvePaths } from './paths.js';

export class ConfigError extends Error {
  override readonly name = 'ConfigError';
  constructor(
    readonly key: string,
    message: string,
  ) {
    super(key === '' ? message : `config key '${key}': ${message}`);
  }
}

export interface ConfigOverrides {
  listen?: string | undefined;
  stateDir?: string | undefined;
}

export function loadConfig(file: string | undefined, overrides: ConfigOverrides = {}, cwd = process.cwd()): Config {
  let raw: unknown = {};
  let base = cwd;
  if (file !== undefined) {
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch (e) {
      throw new ConfigError('', `cannot read config file ${file}: ${(e as NodeJS.ErrnoException).code ?? 'error'}`);
    }
    try {
      raw = JSON.parse(text);
    } catch (e) {
      throw new ConfigError('', `config file ${file} is not valid JSON: ${e instanceof Error ? e.message : ''}`);
    }
    base = dirname(resolve(cwd, file));
  }
  return buildConfig(raw, overrides, base, cwd);
}

/** Validate an already-parsed object (used by loadConfig and by tests). */
export function buildConfig(raw: unknown, overrides: ConfigOverrides = {}, base = process.cwd(), cwd = base): Config {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw))
    throw new ConfigError('', 'the configuration must be a JSON object');
  const obj = structuredClone(raw) as Record<string, unknown>;
  // Command-line paths are relative to the working directory, file paths to the file.
  if (overrides.listen !== undefined) obj.listen = overrides.listen;
  refuseWithdrawnValues(obj);
  const v = Value.Default(ConfigSchema, obj) as Record<string, unknown>;
  const first = Value.Errors(ConfigSchema, v).First();
  if (first) throw new ConfigError(pathToKey(first.path), schemaErrorMessage(first));
  const cfg = v as unknown as Config & Record<string, unknown>;
  checkSemantics(cfg);
  // Every path key of the file is relative to the file (src/config/paths.ts: one resolver
  // for all; a relative RTE script used to be taken relative to wherever the job ran, a
  // relative jwksFile relative to the working directory).
  const resolved = resolvePaths(ConfigSchema, cfg, base);
  const stateDir = overrides.stateDir !== undefined ? resolve(cwd, overrides.stateDir) : resolved.stateDir;
  return deepFreeze({ ...resolved, stateDir });
}

/**
 * Values a key once took and no longer does, refused with the reason and what to use
 * instead (the schema alone would only say the value is not allowed).
 */
function refuseWithdrawnValues(obj: Record<string, unknown>): void {
  const lrms = obj.lrms as { slurm?: { switchUser?: unknown } } | undefined;
  if (lrms?.slurm?.switchUser === 'sudo')
    throw new ConfigError(
      'lrms.slurm.switchUser',
      "'sudo' is not supported: a service that maps users to local accounts runs as root (it refuses a mapping otherwise) " +
        "and submits with runuser; remove the key or set it to 'runuser', and run the service as root " +
        '(docs/operations.md, "The systemd units")',
    );
}

function checkSemantics(cfg: Config): void {
  const port = Number(cfg.listen.slice(cfg.listen.lastIndexOf(':') + 1));
  if (!(port >= 0 && port <= 65535)) throw new ConfigError('listen', `port ${port} is out of range`);
  const t = cfg.tls;
  if ((t.hostCert === undefined) !== (t.hostKey === undefined))
    throw new ConfigError(
      t.hostCert === undefined ? 'tls.hostCert' : 'tls.hostKey',
      'tls.hostCert and tls.hostKey must be set together',
    );
  if (t.hostCert !== undefined && t.caDir === undefined)
    throw new ConfigError('tls.caDir', 'a CA directory is required with a configured host certificate');
  const names = new Set<string>();
  cfg.cluster.queues.forEach((q, i) => {
    if (names.has(q.name)) throw new ConfigError(`cluster.queues.${i}.name`, `duplicate queue name '${q.name}'`);
    names.add(q.name);
  });
  if (cfg.cluster.defaultQueue !== undefined && !names.has(cfg.cluster.defaultQueue))
    throw new ConfigError('cluster.defaultQueue', `'${cfg.cluster.defaultQueue}' is not one of the configured queues`);
  if (cfg.metrics.listen !== undefined && !isLoopback(listenParts(cfg.metrics.listen).host)) {
    throw new ConfigError(
      'metrics.listen',
      'the metrics listener serves without authentication: it must listen on a loopback address (127.0.0.1, ::1, localhost)',
    );
  }
  const authz = checkAuthorizationConfig(cfg);
  if (authz) throw new ConfigError(authz.key, authz.message);
}

function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);
}

export function listenParts(listen: string): { host: string; port: number } {
  const i = listen.lastIndexOf(':');
  let host = listen.slice(0, i);
  if (host.startsWith('[') && host.endsWith(']')) host = host.slice(1, -1);
  return { host, port: Number(listen.slice(i + 1)) };
}

/**
 * A schema error in words: a schema that says what it expects (`errorMessage`,
 * src/config/patterns.ts) gives `expected <words>, got <value>`; the others keep the
 * validator's message (a type, a bound, an unknown key).
 */
function schemaErrorMessage(e: ValueError): string {
  const words = (e.schema as { errorMessage?: unknown }).errorMessage;
  if (typeof words !== 'string') return e.message;
  const got = JSON.stringify(e.value) ?? String(e.value);
  return `expected ${words}, got ${got.length > 80 ? `${got.slice(0, 77)}...` : got}`;
}

function pathToKey(p: string): string {
  return p.replace(/^\//, '').replaceAll('/', '.');
}

export function deepFreeze<T>(o: T): T {
  if (o !== null && typeof o === 'object' && !Object.isFrozen(o)) {
    Object.freeze(o);
    for (const v of Object.values(o as object)) deepFreeze(v);
  }
  return o;
}
