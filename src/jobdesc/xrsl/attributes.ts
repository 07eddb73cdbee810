/**
 * xRSL attribute semantics in A-REX's server-side ("GRIDMANAGER") dialect, which is how
 * A-REX reads any xRSL POSTed to REST: times default to seconds, `action` is allowed,
 * `gridtime` is ignored, and an input source `size[.checksum]` describes a file the
 * client uploads. Error texts are A-REX's where it has one; every error is positioned at
 * the relation it concerns.
 *
 * Deliberate differences (docs/job-descriptions.md): malformed times and sizes are
 * errors instead of silently 0; `join` is honoured (stderr := stdout) instead of ignored.
 */
import { parseAccessControlText } from '../access-control.js';
import { parseArcTime } from '../arc-time.js';
import { classifyLocation, isRemoteUrl } from '../locations.js';
import {
  emptyJobDescription,
  type FileLocation,
  type InputFile,
  type JobDescription,
  type NotifyState,
  type OutputFile,
} from '../../vocabulary/job-description.js';
import { putOption } from '../option-record.js';
import { parsePeriod } from '../period.js';
import { parseStrictInt, parseUnsigned, parseYesNo } from '../values.js';
import type { EvalRelation, EvalValue } from './evaluate.js';
import { RslError } from './syntax.js';

const MiB = 1024 * 1024;

/** Attributes that may appear more than once (each occurrence adds). */
const REPEATABLE = new Set(['runtimeenvironment']);

/** Known attributes A-REX parses but does not act on; everything unknown is ignored too. */
const IGNORED = new Set([
  'gridtime',
  'middleware',
  'opsys',
  'architecture',
  'cluster',
  'replicacollection',
  'nodeaccess',
  'hostname',
  'jobid',
  'clientxrsl',
  'clientsoftware',
  'savestate',
]);

/** Attributes with semantics below (single-definition rule applies). */
const KNOWN = new Set([
  'executable',
  'arguments',
  'stdin',
  'stdout',
  'stderr',
  'join',
  'inputfiles',
  'outputfiles',
  'executables',
  'cache',
  'delegationid',
  'queue',
  'starttime',
  'lifetime',
  'cputime',
  'walltime',
  'benchmarks',
  'memory',
  'disk',
  'gmlog',
  'jobname',
  'ftpthreads',
  'acl',
  'notify',
  'rerun',
  'priority',
  'dryrun',
  'environment',
  'count',
  'countpernode',
  'exclusiveexecution',
  'jobreport',
  'credentialserver',
  'action',
]);

/** Single-valued attributes copied as they are into a model field ("" = not given). */
const STRING_FIELDS = new Map<string, 'executable' | 'stdin' | 'stdout' | 'stderr' | 'logDir' | 'jobName'>([
  ['executable', 'executable'],
  ['stdin', 'stdin'],
  ['stdout', 'stdout'],
  ['stderr', 'stderr'],
  ['gmlog', 'logDir'],
  ['jobname', 'jobName'],
]);

const NOTIFY_FLAGS = new Map<string, NotifyState>([
  ['b', 'PREPARING'],
  ['q', 'INLRMS'],
  ['f', 'FINISHING'],
  ['e', 'FINISHED'],
  ['d', 'DELETED'],
  ['c', 'CANCELING'],
]);
const ACTIONS = new Set(['request', 'cancel', 'clean', 'renew', 'restart']);

function fail(message: string, at: number): never {
  throw new RslError(message, at, 'semantic');
}

function single(r: EvalRelation): string {
  if (r.values.length !== 1) fail(`Value of attribute '${r.attribute}' expected to be single value`, r.start);
  const v = r.values[0];
  if (typeof v !== 'string') fail(`Value of attribute '${r.attribute}' expected to be a string`, r.start);
  return v;
}

function list(r: EvalRelation): string[] {
  const out: string[] = [];
  for (const v of r.values) {
    if (typeof v !== 'string') fail(`Value of attribute '${r.attribute}' is not a string`, r.start);
    out.push(v);
  }
  return out;
}

function seqList(r: EvalRelation, length?: number): string[][] {
  const out: string[][] = [];
  for (const v of r.values) {
    if (typeof v === 'string') fail(`Value of attribute '${r.attribute}' is not sequence`, r.start);
    if (length !== undefined && v.items.length !== length) {
      fail(
        `Value of attribute '${r.attribute}' has wrong sequence length: Expected ${length}, found ${v.items.length}`,
        v.start,
      );
    }
    out.push(
      v.items.map((x: EvalValue) =>
        typeof x === 'string' ? x : fail(`Value of attribute '${r.attribute}' is not a string`, x.start),
      ),
    );
  }
  return out;
}

/** A single value where the empty string means "not given". */
function optionalSingle(r: EvalRelation): string | undefined {
  const v = single(r);
  return v === '' ? undefined : v;
}

function duration(r: EvalRelation): number | undefined {
  const v = single(r);
  const s = parsePeriod(v, 1);
  if (s === undefined) fail(`Value of attribute '${r.attribute}' is not a valid duration ('${v}')`, r.start);
  return s > 0 ? s : undefined;
}

function megabytes(r: EvalRelation): number | undefined {
  const v = single(r);
  const n = parseUnsigned(v);
  if (n === undefined)
    fail(`Value of attribute '${r.attribute}' must be a whole number of megabytes ('${v}')`, r.start);
  return n > 0 ? n * MiB : undefined;
}

interface FileOptions {
  options?: Record<string, string>;
  locations?: FileLocation[];
  delegationId?: string;
}

/** Items after name and URL: `name=value` URL options, `location=URL` replicas, `delegationid=ID`. */
function fileOptions(items: string[], kind: 'input' | 'output', file: string, at: number): FileOptions {
  const out: FileOptions = {};
  let currentLocation: FileLocation | undefined;
  for (let i = 2; i < items.length; i++) {
    const opt = items[i] ?? '';
    const eq = opt.indexOf('=');
    if (eq <= 0) fail(`Invalid URL option syntax in option '${opt}' for ${kind} file '${file}'`, at);
    const key = opt.slice(0, eq);
    const value = opt.slice(eq + 1);
    if (key === 'location') {
      if (!isRemoteUrl(value)) fail(`Invalid URL '${value}' for ${kind} file '${file}'`, at);
      currentLocation = { url: value };
      (out.locations ??= []).push(currentLocation);
    } else if (key === 'delegationid') {
      out.delegationId = value;
    } else if (currentLocation) {
      currentLocation.options = putOption(currentLocation.options, key, value);
    } else {
      out.options = putOption(out.options, key, value);
    }
  }
  return out;
}

/** GM dialect: a source whose part before the first `.` is all digits is `size[.checksum]`. */
function sizeChecksum(source: string): { size: number; checksum?: string } | undefined {
  const dot = source.indexOf('.');
  const head = dot < 0 ? source : source.slice(0, dot);
  if (head.length === 0 || head.length > 16) return undefined;
  for (let i = 0; i < head.length; i++) {
    const c = head.charCodeAt(i);
    if (c < 0x30 || c > 0x39) return undefined;
  }
  const size = Number(head);
  if (!Number.isSafeInteger(size)) return undefined;
  const checksum = dot < 0 ? '' : source.slice(dot + 1);
  return checksum ? { size, checksum } : { size };
}

function inputFile(items: string[], at: number): InputFile {
  if (items.length < 2) fail("At least two values are needed for the 'inputfiles' attribute", at);
  const name = items[0] ?? '';
  const source = items[1] ?? '';
  if (name === '') fail("First value of 'inputfiles' attribute (filename) cannot be empty", at);
  const f: InputFile = { name, executable: false };
  const sc = sizeChecksum(source);
  if (sc) {
    f.size = sc.size;
    if (sc.checksum !== undefined) f.checksum = sc.checksum;
  } else {
    const kind = classifyLocation(source);
    if (kind === 'invalid') fail(`Invalid URL '${source}' for input file '${name}'`, at);
    if (kind === 'url') f.source = source;
  }
  const o = fileOptions(items, 'input', name, at);
  if (o.delegationId !== undefined) f.delegationId = o.delegationId;
  if (o.options) f.options = o.options;
  if (o.locations) f.locations = o.locations;
  return f;
}

function outputFile(items: string[], at: number): OutputFile {
  if (items.length < 2) fail("At least two values are needed for the 'outputfiles' attribute", at);
  const name = items[0] ?? '';
  const target = items[1] ?? '';
  if (name === '') fail("First value of 'outputfiles' attribute (filename) cannot be empty", at);
  const f: OutputFile = { name, options: { useIfSuccess: true, useIfFailure: false, useIfCancel: false } };
  const kind = classifyLocation(target);
  if (kind === 'invalid') fail(`Invalid URL '${target}' for output file '${name}'`, at);
  if (kind === 'url') f.target = target;
  const o = fileOptions(items, 'output', name, at);
  if (o.delegationId !== undefined) f.delegationId = o.delegationId;
  if (o.options) f.urlOptions = o.options;
  if (o.locations) f.locations = o.locations;
  return f;
}

function notifyEntry(entry: string, at: number): { states: NotifyState[]; recipients: string[] } {
  const bad = (why: string): never => fail(`Syntax error in 'notify' attribute value ('${entry}'), ${why}`, at);
  const tokens = entry.split(/[ \t\r\n\v\f]+/).filter((t) => t !== '');
  let flags = 'be';
  let i = 0;
  const first = tokens[0];
  if (first !== undefined && !first.includes('@')) {
    for (const ch of first) if (!NOTIFY_FLAGS.has(ch)) bad('it contains unknown state flags');
    flags = first;
    i = 1;
  }
  if (i >= tokens.length) bad('it must contain an email address');
  const recipients = tokens.slice(i);
  for (const r of recipients) if (!r.includes('@')) bad('it must only contain email addresses after state flag(s)');
  const states: NotifyState[] = [];
  for (const ch of flags) {
    const s = NOTIFY_FLAGS.get(ch);
    if (s && !states.includes(s)) states.push(s);
  }
  return { states, recipients };
}

/** Interprets the evaluated relations of one request; throws RslError (claimed). */
export function interpretXrsl(relations: readonly EvalRelation[]): JobDescription {
  const d = emptyJobDescription('xrsl');
  const seen = new Set<string>();
  let join = false;
  let executables: { names: string[]; at: number } | undefined;
  let cache: string | undefined;
  let threads: number | undefined;
  let countPerNodeAt = -1;
  let benchmarkCpu: number | undefined;

  for (const r of relations) {
    const a = r.attribute;
    if (!REPEATABLE.has(a) && (KNOWN.has(a) || IGNORED.has(a))) {
      if (seen.has(a)) fail(`Attribute '${a}' multiply defined`, r.start);
      seen.add(a);
    }
    const field = STRING_FIELDS.get(a);
    if (field !== undefined) {
      const v = optionalSingle(r);
      if (v !== undefined) d[field] = v;
      continue;
    }
    switch (a) {
      case 'arguments':
        d.arguments = list(r);
        break;
      case 'join':
        join = parseYesNo(single(r)) === true;
        break;
      case 'inputfiles':
        for (const items of seqList(r)) d.inputFiles.push(inputFile(items, r.start));
        break;
      case 'outputfiles':
        for (const items of seqList(r)) d.outputFiles.push(outputFile(items, r.start));
        break;
      case 'executables':
        executables = { names: list(r), at: r.start };
        break;
      case 'cache':
        cache = single(r);
        break;
      case 'delegationid': {
        if (r.op !== '=')
          fail(`Invalid comparison operator '${r.op}' used at 'delegationid' attribute, only "=" is allowed.`, r.start);
        const v = optionalSingle(r);
        if (v !== undefined) d.delegationId = v;
        break;
      }
      case 'queue': {
        if (r.op !== '=')
          fail(
            `Invalid comparison operator '${r.op}' used at 'queue' attribute in 'GRIDMANAGER' dialect, only "=" is allowed`,
            r.start,
          );
        const v = optionalSingle(r);
        if (v !== undefined) d.queue = v;
        break;
      }
      case 'starttime': {
        const v = single(r);
        const t = parseArcTime(v);
        if (t === undefined) fail(`Value of attribute 'starttime' is not a valid time ('${v}')`, r.start);
        d.startTime = t;
        break;
      }
      case 'lifetime': {
        const s = duration(r);
        if (s !== undefined) d.lifetimeSeconds = s;
        break;
      }
      case 'cputime': {
        const s = duration(r);
        if (s !== undefined) d.cpuTimeSeconds = s;
        break;
      }
      case 'walltime': {
        const s = duration(r);
        if (s !== undefined) d.wallTimeSeconds = s;
        break;
      }
      case 'benchmarks':
        // (name value time) triples; the first usable one gives the CPU time when
        // `cputime` is absent. We publish no benchmarks, so the time is not scaled.
        for (const [, value, time] of seqList(r, 3)) {
          const t = parsePeriod(time ?? '', 1);
          if (benchmarkCpu === undefined && t !== undefined && t > 0 && Number.isFinite(Number(value)))
            benchmarkCpu = t;
        }
        break;
      case 'memory': {
        const b = megabytes(r);
        if (b !== undefined) d.memoryBytes = b;
        break;
      }
      case 'disk': {
        const b = megabytes(r);
        if (b !== undefined) d.diskBytes = b;
        break;
      }
      case 'runtimeenvironment': {
        const [name, ...options] = list(r);
        if (name === undefined || name === '')
          fail("Value of attribute 'runtimeenvironment' expected not to be empty", r.start);
        const rte: JobDescription['runtimeEnvironments'][number] = { name, options };
        if (r.op !== '=') rte.constraint = r.op;
        d.runtimeEnvironments.push(rte);
        break;
      }
      case 'ftpthreads': {
        const n = parseStrictInt(single(r));
        if (n === undefined || n < 1 || n > 10)
          fail('The value of the ftpthreads attribute must be a number from 1 to 10', r.start);
        threads = n;
        break;
      }
      case 'acl': {
        const v = single(r);
        try {
          d.accessControl = parseAccessControlText(v);
        } catch {
          // A-REX ignores an ACL that is not XML (the job gets no ACL).
        }
        break;
      }
      case 'notify':
        for (const entry of list(r)) d.notify.push(notifyEntry(entry, r.start));
        break;
      case 'rerun': {
        const n = parseUnsigned(single(r));
        if (n === undefined) fail("Value of attribute 'rerun' must be a non-negative integer", r.start);
        d.rerun = n;
        break;
      }
      case 'priority': {
        const n = parseStrictInt(single(r));
        if (n === undefined) fail("Value of attribute 'priority' must be an integer", r.start);
        // A-REX clamps above 100 and uses its default (50) for anything below 1.
        if (n >= 1) d.priority = Math.min(n, 100);
        break;
      }
      case 'dryrun': {
        const b = parseYesNo(single(r));
        if (b === undefined) fail("Value of 'dryrun' attribute must either be 'yes' or 'no'", r.start);
        d.dryRun = b;
        break;
      }
      case 'environment':
        for (const [name, value] of seqList(r, 2)) d.environment.push([name ?? '', value ?? '']);
        break;
      case 'count': {
        const n = parseStrictInt(single(r));
        if (n === undefined) fail("Value of 'count' attribute must be an integer", r.start);
        d.count = n;
        break;
      }
      case 'countpernode': {
        const n = parseStrictInt(single(r));
        if (n === undefined) fail("Value of 'countpernode' attribute must be an integer", r.start);
        d.countPerNode = n;
        countPerNodeAt = r.start;
        break;
      }
      case 'exclusiveexecution': {
        const b = parseYesNo(single(r));
        if (b === undefined) fail("Value of 'exclusiveexecution' attribute must either be 'yes' or 'no'", r.start);
        d.exclusiveExecution = b;
        break;
      }
      case 'jobreport': {
        const v = single(r);
        if (isRemoteUrl(v)) d.jobReportUrls.push(v); // invalid URLs are ignored, as in A-REX
        break;
      }
      case 'credentialserver': {
        const v = single(r);
        if (isRemoteUrl(v)) d.credentialServer = v;
        break;
      }
      case 'action': {
        const v = single(r);
        if (ACTIONS.has(v)) d.action = v as NonNullable<JobDescription['action']>;
        break;
      }
      default:
      // Ignored (A-REX does not act on it) or unknown (A-REX ignores those silently).
    }
  }

  if (join && d.stdout !== undefined && d.stderr === undefined) d.stderr = d.stdout;
  d.join = d.stdout !== undefined && d.stdout === d.stderr;
  if (countPerNodeAt >= 0 && d.count === undefined) {
    fail("When specifying 'countpernode' attribute, 'count' attribute must also be specified", countPerNodeAt);
  }
  if (d.cpuTimeSeconds === undefined && benchmarkCpu !== undefined) d.cpuTimeSeconds = benchmarkCpu;
  if (executables) {
    const byName = new Map<string, InputFile>();
    for (const f of d.inputFiles) byName.set(f.name, f);
    for (const name of executables.names) {
      const f = byName.get(name);
      if (!f)
        fail(
          `File '${name}' in the 'executables' attribute is not present in the 'inputfiles' attribute`,
          executables.at,
        );
      f.executable = true;
    }
  }
  if (cache !== undefined) {
    for (const f of d.inputFiles) if (f.source !== undefined && !f.executable) (f.options ??= {}).cache = cache;
  }
  if (threads !== undefined) {
    const t = String(threads);
    for (const f of d.inputFiles) if (f.source !== undefined) (f.options ??= {}).threads = t;
    for (const f of d.outputFiles) if (f.target !== undefined) (f.urlOptions ??= {}).threads = t;
  }
  return d;
}
