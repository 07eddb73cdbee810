/**
 * Dynamic output lists: an output named `@list` stands for the outputs the job wrote
 * into the session file `list`, one per line as `name [URL]` (no URL = kept for the
 * client). The entries inherit the list's delegation and outcome flags. A list the
 * job did not write adds nothing (typical when it failed early).
 */
import { openSessionFile, parseSessionName } from './session-path.js';
import { StagingError } from './staging-error.js';
import type { StageOutFile } from './types.js';

const MAX_LIST_BYTES = 4 * 1024 * 1024;

export async function expandDynamicOutputs(
  sessionDir: string,
  outputs: readonly StageOutFile[],
): Promise<StageOutFile[]> {
  const out: StageOutFile[] = [];
  for (const o of outputs) {
    if (!o.name.startsWith('@')) {
      out.push(o);
      continue;
    }
    out.push({ ...o, name: o.name.slice(1), target: undefined });
    const { rel } = parseSessionName(o.name.slice(1));
    let text: string;
    try {
      const { handle, size } = await openSessionFile(sessionDir, rel);
      try {
        const buf = Buffer.alloc(Math.min(size, MAX_LIST_BYTES));
        await handle.read(buf, 0, buf.length, 0);
        text = buf.toString('utf8');
      } finally {
        await handle.close();
      }
    } catch (e) {
      if (e instanceof StagingError) continue;
      throw e;
    }
    for (const line of text.split('\n')) {
      const fields = line
        .trim()
        .split(/\s+/)
        .filter((f) => f !== '');
      const [name, target] = fields;
      if (name === undefined) continue;
      out.push({
        name,
        ...(target === undefined ? {} : { target }),
        ...(o.delegationId === undefined ? {} : { delegationId: o.delegationId }),
        when: o.when,
        fromList: true,
      });
    }
  }
  return out;
}
