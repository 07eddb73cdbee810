/** The JSON lines of a service's log file so far (none while it does not exist). */
import { existsSync, readFileSync } from 'node:fs';

export function logLines(file: string): any[] {
  return existsSync(file)
    ? readFileSync(file, 'utf8')
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l))
    : [];
}
