import { Type } from '@sinclair/typebox';
import { HOST_PORT, PERCENT } from '../patterns.js';

/**
 * A low-water mark: bytes (an integer) or a share of the file system ("5%"). Below it
 * the service refuses what would fill the file system (docs/operations.md, Disk space).
 */
const lowWater = (what: string) =>
  Type.Union([Type.Integer({ minimum: 0 }), Type.String({ ...PERCENT })], {
    default: '1%',
    errorMessage: `bytes (an integer) or ${PERCENT.errorMessage}`,
    description: `Free space on the ${what} file system below which submissions and uploads are refused with 507: bytes (integer) or a percentage of the file system ("5%"); 0 turns the mark off`,
  });

/** Prometheus metrics listener and the disk-space low-water marks. */
export const monitoringSection = {
  metrics: Type.Object(
    {
      listen: Type.Optional(
        Type.String({
          ...HOST_PORT,
          description:
            'HOST:PORT of the plain-HTTP listener serving /metrics (Prometheus) and /health/live, /health/ready. Loopback addresses only (127.0.0.0/8, ::1, localhost); unset: no such listener (the health paths stay on the main port). Suggested: 127.0.0.1:9464',
        }),
      ),
    },
    { default: {}, additionalProperties: false },
  ),
  disk: Type.Object(
    {
      sessionsLowWater: lowWater('session directories'),
      stateLowWater: lowWater('state directory (database, control files)'),
      checkIntervalSeconds: Type.Number({
        default: 10,
        exclusiveMinimum: 0,
        description: 'How often free space is looked at (one statfs per file system)',
      }),
    },
    { default: {}, additionalProperties: false },
  ),
};
