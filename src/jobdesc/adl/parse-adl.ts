/**
 * EMI-ES ADL (with the NorduGrid extensions) → job model, on the tree of
 * src/doc/parse-xml.ts. Elements are matched by namespace URI and local name, whatever
 * the prefix; unknown elements are ignored, as A-REX does.
 *
 * Validation follows A-REX's ADL parser (job descriptions §4.2): integers and
 * booleans are strict, `NetworkInfo` and `Benchmark` are always errors, a
 * `SlotRequirement` needs `NumberOfSlots`, and so on. A-REX reports every one of these as
 * the bare `emies:adl parsing error`; we append the specific message on the next line.
 * Things the parser accepts but A-REX refuses (Pre/PostExecutable, Coprocessor, append)
 * are kept in the model for the acceptance checks.
 */
import { childElements, localName, textOf, type XmlElement } from '../../doc/element.js';
import { lineOf, XmlParseError } from '../../doc/parse-xml.js';
import { accessControlFromElement, parseAccessControlText } from '../access-control.js';
import { parseArcTime } from '../arc-time.js';
import { classifyLocation } from '../locations.js';
import {
  emptyJobDescription,
  type ExecutableCommand,
  type FileLocation,
  type InputFile,
  type JobDescription,
  type NotifyState,
  type OutputFile,
  type RuntimeEnvironmentRequest,
} from '../../vocabulary/job-description.js';
import { putOption } from '../option-record.js';
import { parsePeriod } from '../period.js';
import { parseStrictInt, parseUnsigned, parseXsdBoolean, roundUpToMiB } from '../values.js';
import { inScopeNamespaces } from '../xml-subtree.js';

export const ADL_NS = 'http://www.eu-emi.eu/es/2010/12/adl';
export const NORDUGRID_ADL_NS = 'http://www.nordugrid.org/es/2011/12/nordugrid-adl';

/** A semantic error in an ADL document (reported as `emies:adl parsing error`). */
export class AdlError extends Error {
  override readonly name = 'AdlError';
  constructor(
    message: string,
    /** The line of the element concerned, where the tree was parsed with positions. */
    readonly line?: number,
  ) {
    // Expected control flow, possibly thousands per bulk request: no stack trace.
    const limit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    super(message);
    Error.stackTraceLimit = limit;
  }
}

const ON_STATE = new Map<string, NotifyState>([
  ['ACCEPTED', 'ACCEPTED'],
  ['PREPROCESSING', 'PREPARING'],
  ['PROCESSING', 'INLRMS'],
  ['POSTPROCESSING', 'FINISHING'],
  ['TERMINAL', 'FINISHED'],
]);

/** Fails on the element `at` (its line goes with the error, for the web's form). */
function fail(at: XmlElement, message: string): never {
  throw new AdlError(message, lineOf(at));
}

/** Children of `e` in the ADL namespace, by local name, in document order. */
function adlChildren(e: XmlElement): Array<[string, XmlElement]> {
  const out: Array<[string, XmlElement]> = [];
  for (const c of e.children) if (typeof c !== 'string' && c.ns === ADL_NS) out.push([localName(c), c]);
  return out;
}

function first(e: XmlElement, local: string, ns = ADL_NS): XmlElement | undefined {
  for (const c of e.children) if (typeof c !== 'string' && c.ns === ns && localName(c) === local) return c;
  return undefined;
}

function all(e: XmlElement, local: string, ns = ADL_NS): XmlElement[] {
  const out: XmlElement[] = [];
  for (const c of e.children) if (typeof c !== 'string' && c.ns === ns && localName(c) === local) out.push(c);
  return out;
}

/** Trimmed text content (values such as paths and numbers are never meant to be padded). */
function text(e: XmlElement): string {
  return textOf(e).trim();
}

function optText(e: XmlElement, local: string): string | undefined {
  const c = first(e, local);
  return c === undefined ? undefined : text(c);
}

function integer(e: XmlElement, what: string): number {
  const n = parseStrictInt(textOf(e));
  if (n === undefined) fail(e, `${what} must be an integer, not '${text(e)}'`);
  return n;
}

function unsigned(e: XmlElement, what: string): number {
  const n = parseUnsigned(textOf(e));
  if (n === undefined) fail(e, `${what} must be a non-negative integer, not '${text(e)}'`);
  return n;
}

function boolean(e: XmlElement, what: string): boolean {
  const b = parseXsdBoolean(textOf(e));
  if (b === undefined) fail(e, `${what} must be true, false, 1 or 0, not '${text(e)}'`);
  return b;
}

function boolAttr(e: XmlElement, name: string, what: string): boolean | undefined {
  const v = e.attrs?.[name];
  if (v === undefined) return undefined;
  const b = parseXsdBoolean(v);
  if (b === undefined) fail(e, `attribute ${name} of ${what} must be true, false, 1 or 0, not '${v}'`);
  return b;
}

/** Parses a root element known to be `{ADL}ActivityDescription`; throws AdlError. */
export function adlToJobDescription(
  root: XmlElement,
  inheritedNs: Readonly<Record<string, string>> = {},
): JobDescription {
  const d = emptyJobDescription('adl');
  const ns = inScopeNamespaces(root, inheritedNs);
  for (const [name, c] of adlChildren(root)) {
    switch (name) {
      case 'ActivityIdentification': {
        const jobName = optText(c, 'Name');
        if (jobName) d.jobName = jobName;
        break;
      }
      case 'Application':
        application(c, d, inScopeNamespaces(c, ns));
        break;
      case 'Resources':
        resources(c, d);
        break;
      case 'DataStaging':
        dataStaging(c, d);
        break;
      default:
    }
  }
  return d;
}

function executableCommand(e: XmlElement, what: string): ExecutableCommand {
  const path = optText(e, 'Path');
  if (path === undefined || path === '') fail(e, `${what} without Path`);
  const cmd: ExecutableCommand = { path, arguments: all(e, 'Argument').map(textOf) };
  const code = first(e, 'FailIfExitCodeNotEqualTo');
  if (code) cmd.expectedExitCode = integer(code, `${what}/FailIfExitCodeNotEqualTo`);
  return cmd;
}

function application(app: XmlElement, d: JobDescription, ns: Readonly<Record<string, string>>): void {
  for (const c of app.children) {
    if (typeof c === 'string') continue;
    const name = localName(c);
    if (c.ns === ADL_NS) {
      switch (name) {
        case 'Executable': {
          const path = optText(c, 'Path');
          if (path !== undefined && path !== '') d.executable = path;
          d.arguments = all(c, 'Argument').map(textOf);
          const code = first(c, 'FailIfExitCodeNotEqualTo');
          if (code) d.expectedExitCode = integer(code, 'FailIfExitCodeNotEqualTo');
          break;
        }
        case 'Input':
          if (text(c) !== '') d.stdin = text(c);
          break;
        case 'Output':
          if (text(c) !== '') d.stdout = text(c);
          break;
        case 'Error':
          if (text(c) !== '') d.stderr = text(c);
          break;
        case 'Environment': {
          // Values are taken verbatim: blanks may be meant.
          const value = first(c, 'Value');
          d.environment.push([optText(c, 'Name') ?? '', value ? textOf(value) : '']);
          break;
        }
        case 'PreExecutable':
          d.preExecutables.push(executableCommand(c, 'PreExecutable'));
          break;
        case 'PostExecutable':
          d.postExecutables.push(executableCommand(c, 'PostExecutable'));
          break;
        case 'RemoteLogging': {
          const url = optText(c, 'URL') ?? '';
          const optional = boolAttr(c, 'optional', 'RemoteLogging') === true;
          if (classifyLocation(url) !== 'url') {
            if (!optional) fail(c, `RemoteLogging URL '${url}' is not a valid URL`);
          } else if (optText(c, 'ServiceType') === 'SGAS') d.jobReportUrls.push(url);
          break;
        }
        case 'ExpirationTime': {
          // Not acted upon by A-REX; only validated. Without `optional="true"` a bad time is an error.
          const optional = boolAttr(c, 'optional', 'ExpirationTime') === true;
          if (parseArcTime(textOf(c)) === undefined && !optional)
            fail(c, `ExpirationTime '${text(c)}' is not a valid time`);
          break;
        }
        case 'WipeTime': {
          // A duration despite the EMI-ES schema saying dateTime; A-REX turns a dateTime into
          // "use the default lifetime", and so do we. Anything else malformed is an error.
          const v = text(c);
          const s = parsePeriod(v, 1);
          if (s !== undefined) {
            if (s > 0) d.lifetimeSeconds = s;
          } else if (parseArcTime(v) === undefined) fail(c, `WipeTime '${v}' is not a valid duration`);
          break;
        }
        case 'Notification':
          notification(c, d);
          break;
        default:
      }
    } else if (c.ns === NORDUGRID_ADL_NS || name === 'LoggingDirectory') {
      switch (name) {
        case 'Rerun':
          d.rerun = unsigned(c, 'Rerun');
          break;
        case 'Priority': {
          const p = integer(c, 'Priority');
          if (p >= 1) d.priority = Math.min(p, 100);
          break;
        }
        case 'LoggingDirectory':
          if (text(c) !== '') d.logDir = text(c);
          break;
        case 'StartTime': {
          const t = parseArcTime(textOf(c));
          if (t === undefined) fail(c, `StartTime '${text(c)}' is not a valid time`);
          d.startTime = t;
          break;
        }
        case 'AccessControl': {
          // The ACL (Type + Content) as XML text, or as elements: either AccessControl's
          // own children or one wrapper element inside it.
          const kids = childElements(c);
          const inner = kids[0];
          const scope = inScopeNamespaces(c, ns);
          if (kids.some((k) => localName(k) === 'Content' || localName(k) === 'Type'))
            d.accessControl = accessControlFromElement(c, ns);
          else if (inner) d.accessControl = accessControlFromElement(inner, scope);
          else {
            try {
              d.accessControl = parseAccessControlText(text(c));
            } catch (e) {
              if (e instanceof XmlParseError) fail(c, `AccessControl is not well-formed XML: ${e.message}`);
              throw e;
            }
          }
          break;
        }
        case 'CredentialService': {
          const url = text(c);
          if (classifyLocation(url) !== 'url') fail(c, `CredentialService '${url}' is not a valid URL`);
          d.credentialServer ??= url;
          break;
        }
        case 'DryRun':
          d.dryRun = boolean(c, 'DryRun');
          break;
        default:
      }
    }
  }
  d.join = d.stdout !== undefined && d.stdout === d.stderr;
}

function notification(n: XmlElement, d: JobDescription): void {
  const protocol = optText(n, 'Protocol') ?? '';
  if (protocol !== 'email') fail(n, `Notification Protocol must be 'email', not '${protocol}'`);
  const recipients = all(n, 'Recipient')
    .map(text)
    .filter((r) => r !== '');
  if (recipients.length === 0) fail(n, 'Notification without Recipient');
  const states: NotifyState[] = [];
  for (const s of all(n, 'OnState')) {
    const v = text(s);
    const st = ON_STATE.get(v);
    if (st === undefined) fail(s, `Notification OnState '${v}' is not supported`);
    if (!states.includes(st)) states.push(st);
  }
  // Without OnState, the xRSL default: when preparing starts and when the job ends.
  d.notify.push({ states: states.length > 0 ? states : ['PREPARING', 'FINISHED'], recipients });
}

function resources(res: XmlElement, d: JobDescription): void {
  for (const [name, c] of adlChildren(res)) {
    switch (name) {
      case 'RuntimeEnvironment': {
        const rname = optText(c, 'Name') ?? '';
        if (rname === '') fail(c, 'RuntimeEnvironment without Name');
        const version = optText(c, 'Version');
        const rte: RuntimeEnvironmentRequest = {
          name: version ? `${rname}-${version}` : rname,
          options: all(c, 'Option').map(text),
        };
        if (boolAttr(c, 'optional', 'RuntimeEnvironment') === true) rte.optional = true;
        d.runtimeEnvironments.push(rte);
        break;
      }
      case 'ParallelEnvironment': {
        // Validated as A-REX does; not acted upon.
        const pps = first(c, 'ProcessesPerSlot');
        if (pps) integer(pps, 'ProcessesPerSlot');
        const tpp = first(c, 'ThreadsPerProcess');
        if (tpp) integer(tpp, 'ThreadsPerProcess');
        for (const o of all(c, 'Option'))
          if ((optText(o, 'Name') ?? '') === '') fail(o, 'ParallelEnvironment Option without Name');
        break;
      }
      case 'Coprocessor': {
        const v = text(c);
        if (v !== '') d.coprocessor = v;
        break;
      }
      case 'NetworkInfo':
        fail(c, 'NetworkInfo is not supported');
        break;
      case 'Benchmark':
        fail(c, 'Benchmark is not supported');
        break;
      case 'NodeAccess': {
        const v = text(c);
        if (v !== 'inbound' && v !== 'outbound' && v !== 'inoutbound')
          fail(c, `NodeAccess must be inbound, outbound or inoutbound, not '${v}'`);
        break;
      }
      case 'IndividualPhysicalMemory': {
        const n = unsigned(c, 'IndividualPhysicalMemory');
        if (n > 0) d.memoryBytes = roundUpToMiB(n);
        break;
      }
      case 'IndividualVirtualMemory': {
        const n = unsigned(c, 'IndividualVirtualMemory');
        if (n > 0) d.virtualMemoryBytes = roundUpToMiB(n);
        break;
      }
      case 'DiskSpaceRequirement': {
        const n = parseUnsigned(textOf(c));
        if (n === undefined || n === 0) fail(c, `DiskSpaceRequirement must be a positive integer, not '${text(c)}'`);
        d.diskBytes = roundUpToMiB(n);
        break;
      }
      case 'RemoteSessionAccess':
        boolean(c, 'RemoteSessionAccess');
        break;
      case 'SlotRequirement':
        slots(c, d);
        break;
      case 'QueueName':
        if (text(c) !== '') d.queue = text(c);
        break;
      case 'IndividualCPUTime':
        unsigned(c, 'IndividualCPUTime');
        break;
      case 'TotalCPUTime': {
        const s = unsigned(c, 'TotalCPUTime');
        if (s > 0) d.cpuTimeSeconds = s;
        break;
      }
      case 'WallTime': {
        const s = unsigned(c, 'WallTime');
        if (s > 0) d.wallTimeSeconds = s;
        break;
      }
      default:
    }
  }
}

function slots(s: XmlElement, d: JobDescription): void {
  const nos = first(s, 'NumberOfSlots');
  if (!nos) fail(s, 'SlotRequirement without NumberOfSlots');
  d.count = integer(nos, 'NumberOfSlots');
  const sph = first(s, 'SlotsPerHost');
  if (!sph) return;
  const use = sph.attrs?.useNumberOfSlots;
  d.countPerNode = use === 'true' || use === '1' ? d.count : integer(sph, 'SlotsPerHost');
  // A-REX reads ExclusiveExecution only together with SlotsPerHost; other values = default.
  const ex = first(s, 'ExclusiveExecution');
  if (ex) {
    const b = parseXsdBoolean(textOf(ex));
    if (b !== undefined) d.exclusiveExecution = b;
  }
}

function options(parent: XmlElement, what: string): Record<string, string> | undefined {
  let out: Record<string, string> | undefined;
  for (const o of all(parent, 'Option')) {
    const name = optText(o, 'Name') ?? '';
    if (name === '') fail(o, `${what} Option without Name`);
    out = putOption(out, name, optText(o, 'Value') ?? '');
  }
  return out;
}

function dataStaging(ds: XmlElement, d: JobDescription): void {
  for (const c of ds.children) {
    if (typeof c === 'string') continue;
    const name = localName(c);
    if (c.ns === NORDUGRID_ADL_NS && name === 'DelegationID') {
      const id = text(c);
      if (id !== '') d.delegationId = id;
      continue;
    }
    if (c.ns !== ADL_NS) continue;
    if (name === 'ClientDataPush') d.clientDataPush = boolean(c, 'ClientDataPush');
    else if (name === 'InputFile') d.inputFiles.push(inputFile(c));
    else if (name === 'OutputFile') d.outputFiles.push(outputFile(c));
  }
}

function inputFile(e: XmlElement): InputFile {
  const name = optText(e, 'Name') ?? '';
  if (name === '') fail(e, 'InputFile without Name');
  const f: InputFile = { name, executable: false };
  const exe = first(e, 'IsExecutable');
  if (exe) {
    const v = text(exe);
    f.executable = v !== '' && v !== 'false' && v !== '0';
  }
  all(e, 'Source').forEach((src, i) => {
    const uri = optText(src, 'URI') ?? '';
    const kind = classifyLocation(uri);
    if (kind === 'invalid') fail(src, `Invalid URI '${uri}' for input file '${name}'`);
    const opts = options(src, 'Source');
    if (i === 0) {
      if (kind === 'url') f.source = uri;
      const deleg = optText(src, 'DelegationID');
      if (deleg) f.delegationId = deleg;
      if (opts) f.options = opts;
    } else if (kind === 'url') {
      const loc: FileLocation = { url: uri };
      if (opts) loc.options = opts;
      (f.locations ??= []).push(loc);
    }
  });
  return f;
}

function outputFile(e: XmlElement): OutputFile {
  const name = optText(e, 'Name') ?? '';
  if (name === '') fail(e, 'OutputFile without Name');
  const f: OutputFile = { name, options: { useIfSuccess: true, useIfFailure: false, useIfCancel: false } };
  all(e, 'Target').forEach((t, i) => {
    const uri = optText(t, 'URI') ?? '';
    const kind = classifyLocation(uri);
    if (kind === 'invalid') fail(t, `Invalid URI '${uri}' for output file '${name}'`);
    const opts = options(t, 'Target');
    let replica: FileLocation | undefined;
    if (opts && Object.hasOwn(opts, 'location')) {
      const loc = opts.location ?? '';
      if (classifyLocation(loc) !== 'url') fail(t, `Invalid location '${loc}' for output file '${name}'`);
      delete opts.location;
      replica = { url: loc };
    }
    if (i > 0) {
      if (kind === 'url')
        (f.locations ??= []).push(opts && Object.keys(opts).length > 0 ? { url: uri, options: opts } : { url: uri });
      if (replica) (f.locations ??= []).push(replica);
      return;
    }
    if (kind === 'url') f.target = uri;
    const deleg = optText(t, 'DelegationID');
    if (deleg) f.delegationId = deleg;
    if (opts && Object.keys(opts).length > 0) f.urlOptions = opts;
    if (replica) (f.locations ??= []).push(replica);
    const mandatory = first(t, 'Mandatory');
    if (mandatory) f.options.mandatory = boolean(mandatory, 'Mandatory');
    const flag = first(t, 'CreationFlag');
    if (flag) {
      const v = text(flag);
      if (v !== 'overwrite' && v !== 'append' && v !== 'dontOverwrite')
        fail(flag, `CreationFlag must be overwrite, append or dontOverwrite, not '${v}'`);
      f.options.creationFlag = v;
    }
    const uif = first(t, 'UseIfFailure');
    if (uif) f.options.useIfFailure = boolean(uif, 'UseIfFailure');
    const uic = first(t, 'UseIfCancel');
    if (uic) f.options.useIfCancel = boolean(uic, 'UseIfCancel');
    const uis = first(t, 'UseIfSuccess');
    if (uis) f.options.useIfSuccess = boolean(uis, 'UseIfSuccess');
  });
  return f;
}
