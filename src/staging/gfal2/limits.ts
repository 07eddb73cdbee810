/**
 * Concurrency limits of gfal2 transfers across all jobs of the service: per endpoint
 * (host and port: one storage element should not get every slot the service has, nor
 * be hammered by it) and per protocol (the gfal2 plugin that speaks the scheme: xrootd,
 * gridftp, srm, ...), beside the limits every transfer has (maxDownloads, maxUploads,
 * maxTransfersPerJob). A transfer takes its protocol's slot first, then its endpoint's:
 * one order for all, so two transfers never each hold one and wait for the other.
 */
import { GFAL2_PLUGIN_SCHEMES } from '../schemes.js';
import { Semaphore } from '../semaphore.js';

const PLUGIN_OF = new Map(
  Object.entries(GFAL2_PLUGIN_SCHEMES).flatMap(([plugin, schemes]) => schemes.map((s) => [s, plugin] as const)),
);

interface Slot {
  readonly sem: Semaphore;
  /** Transfers holding or waiting for this slot: at 0 the entry goes (a map bounded by what runs). */
  users: number;
}

export class Gfal2Limits {
  readonly #hosts = new Map<string, Slot>();
  readonly #protocols = new Map<string, Slot>();

  constructor(
    private readonly perHost: number,
    private readonly perProtocol: number,
  ) {}

  /** Runs `fn` holding the slots of `url`'s protocol and endpoint; waiting ends on `signal`. */
  async with<T>(url: URL, signal: AbortSignal, fn: () => Promise<T>): Promise<T> {
    const scheme = url.protocol.replace(/:$/, '').toLowerCase();
    const protocol = PLUGIN_OF.get(scheme) ?? scheme;
    const port = url.port === '' ? '' : `:${url.port}`;
    const host = `${protocol}://${url.hostname.toLowerCase()}${port}`;
    return held(this.#protocols, protocol, this.perProtocol, signal, () =>
      held(this.#hosts, host, this.perHost, signal, fn),
    );
  }

  /** Endpoints and protocols with transfers holding or waiting for a slot (metrics, tests). */
  get tracked(): { hosts: number; protocols: number } {
    return { hosts: this.#hosts.size, protocols: this.#protocols.size };
  }
}

async function held<T>(
  map: Map<string, Slot>,
  key: string,
  limit: number,
  signal: AbortSignal,
  fn: () => Promise<T>,
): Promise<T> {
  let slot = map.get(key);
  if (slot === undefined) {
    slot = { sem: new Semaphore(limit), users: 0 };
    map.set(key, slot);
  }
  slot.users++;
  try {
    return await slot.sem.with(fn, signal);
  } finally {
    if (--slot.users === 0) map.delete(key);
  }
}
