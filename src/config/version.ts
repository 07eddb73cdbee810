/**
 * The version Ceres reports (GLUE2 ComputingEndpoint ImplementationVersion): the
 * `version` of package.json, read once at load. The compiled module lives in
 * dist/src/config/, three levels below the package root, in a checkout and in an
 * installed package alike.
 */
import { readFileSync } from 'node:fs';

export const CERES_VERSION: string = (
  JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { version: string }
).version;
