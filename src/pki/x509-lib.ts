/**
 * The single entry point to @peculiar/x509. The library's decorators need
 * reflect-metadata loaded before its own module body runs, and ESM evaluates imports
 * in order, so every user of the library imports it from here.
 */
import 'reflect-metadata';
import { webcrypto } from 'node:crypto';
import * as x509 from '@peculiar/x509';

x509.cryptoProvider.set(webcrypto);

export { x509 };
export type CryptoKey = webcrypto.CryptoKey;
export type CryptoKeyPair = webcrypto.CryptoKeyPair;
