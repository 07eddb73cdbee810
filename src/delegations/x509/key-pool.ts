/**
 * RSA key pairs made ahead of time for X.509 delegation requests. Making a 2048-bit key
 * takes 0.1–0.7 s of CPU on a small machine, and the ARC client asks for a new delegation
 * at every `arcsub`: with a ready key, `action=new` answers in milliseconds.
 *
 * Rules:
 *  - a key pair is handed out once and only once (taken out of the pool before use);
 *  - at most `size` pairs wait, held in memory only (never written, never logged);
 *  - the pool is filled in the background, one generation at a time, so it never takes
 *    more than one thread-pool thread; filling starts at `prime` (the service calls it
 *    once it is serving, so the first `action=new` after a start finds a key ready) or at
 *    the first `take`, and resumes after every `take`;
 *  - when the pool is empty (a burst of requests), `take` makes a key on the spot;
 *  - a failed background generation is reported and ends that fill; the next `take`
 *    tries again (no retry loop against a broken generator);
 *  - after `close` nothing more is generated in the background and waiting keys are dropped.
 */
import type { CryptoKeyPair } from '../../pki/x509-lib.js';

export type KeyGenerator = () => Promise<CryptoKeyPair>;

export interface KeyPoolOptions {
  /** Key pairs kept ready; 0 makes every key when asked. */
  readonly size: number;
  readonly generate: KeyGenerator;
  /** Told about a failed background generation (the error carries no key material). */
  readonly onError: (e: unknown) => void;
}

export class KeyPool {
  readonly #o: KeyPoolOptions;
  #ready: CryptoKeyPair[] = [];
  #filling = false;
  #closed = false;

  constructor(o: KeyPoolOptions) {
    this.#o = o;
  }

  /** Key pairs waiting to be taken. */
  get ready(): number {
    return this.#ready.length;
  }

  /** A key pair nobody else has had or will have. */
  async take(): Promise<CryptoKeyPair> {
    const pooled = this.#ready.pop();
    // The request's own generation is started before the refill's.
    const pair = pooled !== undefined ? Promise.resolve(pooled) : this.#o.generate();
    this.#fill();
    return pair;
  }

  /** Start filling the pool now, without waiting for a first request. */
  prime(): void {
    this.#fill();
  }

  close(): void {
    this.#closed = true;
    this.#ready = [];
  }

  #fill(): void {
    if (this.#filling || this.#closed || this.#ready.length >= this.#o.size) return;
    this.#filling = true;
    void this.#fillLoop().finally(() => (this.#filling = false));
  }

  async #fillLoop(): Promise<void> {
    while (!this.#closed && this.#ready.length < this.#o.size) {
      let pair: CryptoKeyPair;
      try {
        pair = await this.#o.generate();
      } catch (e) {
        this.#o.onError(e);
        return;
      }
      if (this.#closed) return;
      this.#ready.push(pair);
    }
  }
}
