import { Type } from '@sinclair/typebox';

/** Job store, submission limits, bulk-call caps. */
export const jobsSection = {
  jobs: Type.Object(
    {
      maxIdsPerRequest: Type.Integer({
        default: 100_000,
        minimum: 1,
        description: 'Most job ids in one bulk action request (aCT polls up to 100,000 per call); more is a 413',
      }),
      maxInfoIdsPerRequest: Type.Integer({
        default: 1000,
        minimum: 1,
        description:
          'Most job ids in one `action=info` request (each answer item is a whole GLUE2 activity document); more is a 413 naming the cap',
      }),
      maxListingEntries: Type.Integer({
        default: 1_000_000,
        minimum: 1,
        description:
          'Most entries a session directory may have to be listed (GET of a directory, PROPFIND); a bigger one is a 403, its files stay readable by name',
      }),
      maxActiveJobsPerUser: Type.Integer({
        default: 10_000,
        minimum: 0,
        description:
          'Most jobs of one owner that have not ended (not FINISHED, FAILED, KILLED or WIPED); further descriptions of a submission get item status 503 `No more jobs allowed` and nothing is made for them; 0 = no limit',
      }),
      maxInstances: Type.Integer({
        default: 1000,
        minimum: 1,
        description: 'Most copies of one description per 1.1 `instances` request (A-REX caps by its job limit)',
      }),
      maxDescriptionBytes: Type.Integer({
        default: 5 * 1024 * 1024,
        minimum: 1024,
        description: 'Largest single job description (A-REX maxjobdesc); a bigger one fails its item with 413',
      }),
      maxDescriptionsPerRequest: Type.Integer({
        default: 10_000,
        minimum: 1,
        description: 'Most job descriptions in one submission request (bulk ADL or + xRSL)',
      }),
      wipedRecordRetentionSeconds: Type.Integer({
        default: 30 * 24 * 3600,
        minimum: 0,
        description: 'How long the minimal record of a WIPED job is kept before it is purged (A-REX defaultttr)',
      }),
    },
    { default: {}, additionalProperties: false },
  ),
};
