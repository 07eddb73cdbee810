/**
 * The engine's fair share and route limits (share-chooser.ts) from the configuration,
 * read per use: `routes` and `fairShare` are reloadable (live-config.ts), and the engine
 * counts every job per route and VO whatever they were at start, so a limit or a share a
 * reload adds holds at once. With `fairShare.by` `user` and no route limit, the users take
 * free slots in turn as before.
 */
import type { Config } from '../config/schema.js';
import type { ShareSettings } from '../engine/scheduler/share-chooser.js';

export function shareSettings(config: () => Config): ShareSettings {
  // Routes limits are found by name: a job keeps the name of its route (a reload may drop it: no limit then).
  const route = (name: string) => config().routes.find((r) => r.name === name);
  return {
    get by() {
      return config().fairShare.by;
    },
    shareOf: (key) => config().fairShare.shares[key] ?? 1,
    maxRunning: (name) => route(name)?.maxRunning ?? 0,
    maxRunningPerVo: (name) => route(name)?.maxRunningPerVo ?? 0,
  };
}
