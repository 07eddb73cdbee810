/**
 * How the harness starts a Ceres: through `bin/ceres`, as operations run it
 * (docs/operations.md: the V8 flags and jemalloc where it is installed). The launcher
 * `exec`s node, so the child's pid is the service's own (RSS and CPU are read from it).
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export function ceresCommand(): { readonly file: string; readonly args: readonly string[] } {
  const launcher = fileURLToPath(new URL('../../../bin/ceres', import.meta.url));
  const cli = fileURLToPath(new URL('../../src/cli/main.js', import.meta.url));
  if (!existsSync(cli)) throw new Error(`the Ceres build is missing (${cli}): run npm run build first`);
  return { file: launcher, args: [] };
}
