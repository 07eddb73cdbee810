import { Type } from '@sinclair/typebox';
import { HOUR, MINUTE, SECOND } from '../units.js';
import { AMS_NAME } from '../patterns.js';

/**
 * Accounting sent to APEL through the ARGO Messaging Service (src/accounting/apel-*.ts,
 * src/messaging/): where the messages go, what they hold, how often and how retried.
 */
export const accountingSection = {
  accounting: Type.Object(
    {
      apel: Type.Object(
        {
          enabled: Type.Boolean({
            default: false,
            description:
              'Send the accounting records to APEL through the ARGO Messaging Service (AMS); off: records are only kept (and `ceres accounting export` writes them as files)',
          }),
          amsHost: Type.String({
            default: 'msg.argo.grnet.gr',
            minLength: 1,
            description: 'Host of the messaging service (msg-devel.argo.grnet.gr for test data)',
          }),
          amsPort: Type.Integer({
            default: 443,
            minimum: 1,
            maximum: 65535,
            description: 'Port of the publish call',
          }),
          tokenPort: Type.Integer({
            default: 8443,
            minimum: 1,
            maximum: 65535,
            description: 'Port of the token call (authenticated by the host certificate)',
          }),
          project: Type.String({
            default: 'accounting',
            ...AMS_NAME,
            description: 'Messaging-service project',
          }),
          topic: Type.String({
            default: 'gLite-APEL',
            ...AMS_NAME,
            description: 'Messaging-service topic APEL reads',
          }),
          site: Type.Optional(
            Type.String({
              minLength: 1,
              description:
                'GOCDB site name (the `Site` of every record); default: cluster.name. The host certificate\'s DN must be registered in GOCDB for this site as a "gLite-APEL" service',
            }),
          ),
          messages: Type.Union([Type.Literal('summaries'), Type.Literal('individual')], {
            default: 'summaries',
            description:
              '`summaries`: monthly summaries (each send replaces the whole month at APEL); `individual`: one record per job run. A sync message (jobs per month) goes with either',
          }),
          batchSize: Type.Integer({
            default: 500,
            minimum: 1,
            maximum: 1000,
            description:
              'Records (summaries or job records) per message; a message that would pass 700 kB is split further (the messaging service takes less than 1 MB)',
          }),
          intervalSeconds: Type.Number({
            default: 1 * HOUR,
            minimum: 1 * SECOND,
            description: 'How often new records are looked for and sent',
          }),
          timeoutSeconds: Type.Number({
            default: 30 * SECOND,
            exclusiveMinimum: 0,
            description: 'Time limit of one call to the messaging service (token or publish)',
          }),
          retryMinSeconds: Type.Number({
            default: 30 * SECOND,
            exclusiveMinimum: 0,
            description: 'First wait after a failed send; doubled after each further failure',
          }),
          retryMaxSeconds: Type.Number({
            default: 30 * MINUTE,
            exclusiveMinimum: 0,
            description: 'Longest wait between retries of a failed send',
          }),
          benchmark: Type.Optional(
            Type.Object(
              {
                type: Type.Union([Type.Literal('HEPSPEC'), Type.Literal('HEPscore23'), Type.Literal('si2k')], {
                  description: 'Benchmark (ServiceLevelType)',
                }),
                value: Type.Number({ exclusiveMinimum: 0, description: 'Per-core value (ServiceLevel)' }),
              },
              {
                additionalProperties: false,
                description: 'The benchmark published with every record; absent: none is published',
              },
            ),
          ),
        },
        { default: {}, additionalProperties: false },
      ),
    },
    { default: {}, additionalProperties: false },
  ),
};
