/**
 * Facts about the machine jobs run on (the `fork` batch system runs them here), for
 * the service document's ExecutionEnvironment. `readHostFacts` is the one function
 * in src/info that touches the system; call it once at start (the facts do not
 * change while the service runs). The parsers are pure and tested on their own.
 * Anything that cannot be read stays absent.
 */
import { readFileSync } from 'node:fs';
import * as os from 'node:os';
import type { HostFacts } from './info-snapshot.js';

/** Node's `os.arch()` names to GLUE2 Platform values (A-REX publishes `uname -m` style names). */
export function glue2Platform(arch: string, endianness: 'BE' | 'LE' = 'LE'): string | undefined {
  switch (arch) {
    case 'x64':
      return 'amd64';
    case 'ia32':
      return 'i686';
    case 'arm64':
      return 'aarch64';
    case 'arm':
      return 'arm';
    case 'ppc64':
      return endianness === 'LE' ? 'ppc64le' : 'ppc64';
    case 's390x':
      return 's390x';
    case 'riscv64':
      return 'riscv64';
    default:
      return undefined;
  }
}

/** Node's `os.platform()` to GLUE2 OSFamily (`linux`, `macosx`, `windows`, `solaris`). */
export function glue2OsFamily(platform: string): string | undefined {
  switch (platform) {
    case 'linux':
      return 'linux';
    case 'darwin':
      return 'macosx';
    case 'win32':
      return 'windows';
    case 'sunos':
      return 'solaris';
    default:
      return undefined;
  }
}

/** `ID` and `VERSION_ID` of an os-release file (GLUE2 OSName / OSVersion, e.g. `debian`, `12`). */
export function parseOsRelease(text: string): { name?: string; version?: string } {
  const out: { name?: string; version?: string } = {};
  for (const line of text.split('\n')) {
    const m = /^\s*(ID|VERSION_ID)=(.*)$/.exec(line);
    if (!m || m[2] === undefined) continue;
    let v = m[2].trim();
    if (v.length >= 2 && (v.startsWith('"') || v.startsWith("'")) && v.endsWith(v[0] ?? '')) v = v.slice(1, -1);
    if (v === '') continue;
    if (m[1] === 'ID') out.name = v.toLowerCase();
    else out.version = v;
  }
  return out;
}

/** The CPU vendor id of a Linux /proc/cpuinfo (`GenuineIntel`, `AuthenticAMD`, ...). */
export function parseCpuVendor(cpuinfo: string): string | undefined {
  const m = /^vendor_id\s*:\s*(\S.*?)\s*$/m.exec(cpuinfo);
  return m?.[1];
}

function readText(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
}

/**
 * Reads the facts of this machine. Memory is the whole machine's; logical CPUs are
 * the ones this process may use (`os.availableParallelism`, which honours CPU
 * affinity). Connectivity is not probed: it stays unknown unless configured.
 */
export function readHostFacts(): HostFacts {
  const cpus = os.cpus();
  const first = cpus[0];
  const release =
    os.platform() === 'linux'
      ? parseOsRelease(readText('/etc/os-release') ?? readText('/usr/lib/os-release') ?? '')
      : {};
  const cpuinfo = os.platform() === 'linux' ? readText('/proc/cpuinfo') : undefined;
  const facts: {
    -readonly [K in keyof HostFacts]: HostFacts[K];
  } = {
    totalInstances: 1,
    logicalCpus: os.availableParallelism(),
    mainMemoryBytes: os.totalmem(),
  };
  const platform = glue2Platform(os.arch(), os.endianness());
  if (platform !== undefined) facts.platform = platform;
  const family = glue2OsFamily(os.platform());
  if (family !== undefined) facts.osFamily = family;
  if (release.name !== undefined) facts.osName = release.name;
  if (release.version !== undefined) facts.osVersion = release.version;
  const vendor = cpuinfo === undefined ? undefined : parseCpuVendor(cpuinfo);
  if (vendor !== undefined) facts.cpuVendor = vendor;
  const model = first?.model.trim();
  if (model) facts.cpuModel = model;
  if (first && first.speed > 0) facts.cpuClockMhz = first.speed;
  return facts;
}
