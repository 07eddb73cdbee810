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
    },
    { default: {}, additionalProperties: false, description: 'The web interface' },
  ),
};
