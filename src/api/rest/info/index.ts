/**
 * `GET|HEAD {base}/info[?schema=glue2]` (spec §4.2): the GLUE2 document. Public, as
 * in A-REX. `schema`: glue2 (default); in 1.0 `crr` is recognised but not offered
 * (501); anything else is a 400.
 */
import type { InfoSource } from '../../../info/info-source.js';
import { ceError } from '../../../errors/ce-error.js';
import { sendDoc } from '../../../http/send.js';
import type { Resource } from '../resource.js';

export function infoResource(source: InfoSource): Resource {
  return {
    public: true,
    methods: {
      GET: (req) => {
        const schema = req.query.get('schema') ?? '';
        if (schema !== '' && schema !== 'glue2') {
          if (schema === 'crr' && req.version === '1.0') throw ceError('CE_ERR_INFO_SCHEMA_NOT_OFFERED');
          throw ceError(
            'CE_ERR_HTTP_SCHEMA_NOT_SUPPORTED',
            `unknown schema '${schema.slice(0, 32)}': only glue2 is supported`,
          );
        }
        return sendDoc(req.reply, req.format, 200, source.document(new URL(req.requestUrl).origin));
      },
    },
  };
}
