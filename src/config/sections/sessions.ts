import { Type } from '@sinclair/typebox';
import { ABSOLUTE_PATH } from '../patterns.js';
import { PATH } from '../paths.js';
import { GiB } from '../units.js';

/** Session directories: limits on what clients upload into them. */
export const sessionsSection = {
  sessions: Type.Object(
    {
      root: Type.Optional(
        Type.String({
          ...PATH,
          minLength: 1,
          ...ABSOLUTE_PATH,
          description:
            'Absolute path of the folder holding the session directories, instead of `<stateDir>/sessions`: e.g. a shared file system a cluster mounts on every node. Made (0711) if missing; at start the service checks it can use it and, with a `mapping`, that every mapped account can reach it (docs/security.md)',
        }),
      ),
      maxFileBytes: Type.Integer({
        default: 32 * GiB,
        minimum: 1,
        description:
          'Largest file an upload may create: the size of a plain PUT, the end offset (and declared total) of a ranged PUT; more is a 413',
      }),
      maxUploadBytesPerJob: Type.Integer({
        default: 64 * GiB,
        minimum: 1,
        description:
          'Upload quota of one job: the sizes of the files written into its session through the REST interface, a ranged PUT counting up to its end offset (so a sparse write counts its full extent); a write that would pass it is a 413. Kept in memory: a restart starts every job from zero',
      }),
    },
    { default: {}, additionalProperties: false },
  ),
};
