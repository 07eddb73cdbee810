/**
 * The engine's fair share and route limits (share-chooser.ts) from the configuration,
 * read per use (the values are reloadable, live-config.ts). Whether the chooser is used
 * at all is decided at start: with `fairShare.by` `user` and no route limit, the users
 * take free slots in turn as before.
 */
import type { Config } from '../config/schema.js';
import type { ShareSettings } from '../engine/scheduler/share-chooser.js';

export function shareSettings(config: () => Config): ShareSettings | undefined {
  const c = config();
  const limited = c.routes.some((r) => r.maxRunning !== undefined || r.maxRunningPerVo !== undefined);
  if (c.fairShare.by === 'user' && !limited) return undefined;
  // Routes limits are found by name: a job keeps the name of its route (a reload may drop it: no limit then).
  const route = (name: string) => config().routes.find((r) => r.name === name);
  return {
    by: c.fairShare.by,
    shareOf: (key) => config().fairShare.shares[key] ?? 1,
    maxRunning: (name) => route(name)?.maxRunning ?? 0,
    maxRunningPerVo: (name) => route(name)?.maxRunningPerVo ?? 0,
  };
}
