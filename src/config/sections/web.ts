import { Type } from '@sinclair/typebox';
import { OWNER_IDENTITY } from '../patterns.js';

/** The web interface (docs/web-interface.md). */
export const webSection = {
  web: Type.Object(
    {
      admins: Type.Array(
        Type.String({
          minLength: 2,
          maxLength: 1024,
          ...OWNER_IDENTITY,
          description:
            "A site administrator's identity, exactly as the service shows it as a job's owner: a certificate's subject DN in one-line form (`/O=Site/CN=Jane Admin`), or a bearer token's `<iss>#<sub>`",
        }),
        {
          default: [],
          uniqueItems: true,
          description:
            "Site administrators of the web interface, each exactly as the service shows the identity as a job's owner: a certificate's subject DN in one-line form (`/O=Site/CN=Jane Admin`, any proxy of it counts) or a bearer token's `<iss>#<sub>`. They see every user's jobs in the job list and on job pages (files and messages included) and may kill and clean them; every other user sees only their own (docs/web-interface.md). Read at start",
        },
      ),
      vomsWindowSeconds: Type.Integer({
        default: 7 * 24 * 3600,
        minimum: 0,
        description:
          "The browser rule for VO members: a browser presents the plain certificate, never a VOMS proxy, so where authorization asks for a VO a member's browser would be refused. A certificate whose VOMS proxy authenticated here (any request of a grid client) within this many seconds is authorized for the web pages as that proxy's FQANs would be, read-only unless `web.vomsMayAct`; when the window passes without a new proxy, the browser access ends. Only FQANs of a fully verified attribute certificate are recorded (one row per identity and FQAN, pruned past the window). 0 turns the rule off (docs/security.md)",
      }),
      vomsMayAct: Type.Boolean({
        default: false,
        description:
          'Whether a browser admitted by `web.vomsWindowSeconds` may also act (submit, kill, clean, restart, upload, delete) as the proxy would; default: it may only look',
      }),
      siteSeriesTickSeconds: Type.Integer({
        minimum: 1,
        maximum: 300,
        default: 300,
        description:
          "How often the site's load series (the overview's pictures) counts the job state changes and the active jobs and rewrites its current bucket: one small database write per tick and bucket length (5-minute and hourly buckets). Shorter: livelier pictures, more writes. Read at start",
      }),
      siteFiguresByVo: Type.Union([Type.Literal('admins'), Type.Literal('everyone')], {
        default: 'admins',
        description:
          "Who sees the overview's pictures of active jobs per VO and per route: `admins` (the site administrators of `web.admins`) or `everyone` signed in. The site's totals and the figures per queue are shown to everyone signed in, as the public info document publishes them per queue too (docs/web-interface.md). Read at start",
      }),
    },
    { default: {}, additionalProperties: false, description: 'The web interface' },
  ),
};
