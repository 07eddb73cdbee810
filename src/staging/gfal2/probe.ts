/**
 * Which gfal2 plugins are installed, asked once at start from gfal2 itself (its Python
 * bindings list what they loaded): the plugin files alone do not say whether the
 * library and the bindings load. Nothing installed, or anything going wrong: no plugins,
 * so only the native schemes are accepted.
 */
import { execFile } from 'node:child_process';
import { SchemeRegistry } from '../schemes.js';

/** The system Python that has the gfal2 bindings (a Python first on PATH may not). */
export const GFAL2_PYTHON = '/usr/bin/python3';

const LIST = 'import gfal2, json; print(json.dumps(list(gfal2.creat_context().get_plugin_names())))';

export function probeGfal2Plugins(python = GFAL2_PYTHON, timeoutMs = 15_000): Promise<string[]> {
  return new Promise((resolve) => {
    execFile(python, ['-c', LIST], { timeout: timeoutMs, env: { PATH: '/usr/bin:/bin' } }, (err, stdout) => {
      if (err !== null) return resolve([]);
      try {
        const names: unknown = JSON.parse(stdout);
        resolve(Array.isArray(names) ? names.filter((n): n is string => typeof n === 'string') : []);
      } catch {
        resolve([]);
      }
    });
  });
}

let probed: Promise<SchemeRegistry> | undefined;

/**
 * The service's scheme registry: gfal2 asked on the first call, the answer kept for the
 * life of the process (the submission check and the stager share it).
 */
export function schemeRegistry(): Promise<SchemeRegistry> {
  probed ??= probeGfal2Plugins().then((plugins) => new SchemeRegistry(plugins));
  return probed;
}
