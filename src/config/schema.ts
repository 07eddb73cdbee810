/**
 * The configuration schema: one object, each area's keys in src/config/sections/.
 * The TypeScript type is derived from the schema (never written twice); defaults
 * live in the schema only. docs/configuration.md documents every key; a test walks
 * this schema and checks the document lists each one.
 */
import { Type, type Static } from '@sinclair/typebox';
import { serverSection } from './sections/server.js';
import { clusterSection } from './sections/cluster.js';
import { jobsSection } from './sections/jobs.js';
import { engineSection } from './sections/engine.js';
import { stagingSection } from './sections/staging.js';
import { delegationsSection } from './sections/delegations.js';
import { sessionsSection } from './sections/sessions.js';
import { authorizationSection } from './sections/authorization.js';
import { monitoringSection } from './sections/monitoring.js';
import { tokensSection } from './sections/tokens.js';
import { webSection } from './sections/web.js';
import { accountsSection } from './sections/accounts.js';
import { accountingSection } from './sections/accounting.js';
import { infosysSection } from './sections/infosys.js';
import { routesSection } from './sections/routes.js';
import { eventsSection } from './sections/events.js';

export const ConfigSchema = Type.Object(
  {
    ...serverSection,
    ...clusterSection,
    ...jobsSection,
    ...engineSection,
    ...stagingSection,
    ...delegationsSection,
    ...sessionsSection,
    ...authorizationSection,
    ...accountsSection,
    ...monitoringSection,
    ...tokensSection,
    ...webSection,
    ...accountingSection,
    ...infosysSection,
    ...routesSection,
    ...eventsSection,
  },
  { additionalProperties: false },
);

export type Config = Readonly<Static<typeof ConfigSchema>>;
