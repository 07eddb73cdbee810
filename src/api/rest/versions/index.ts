/**
 * `GET|HEAD {service}/rest`: the supported versions in ascending order (spec §4.1).
 * pyarcrest takes the last one, so the order is part of the contract.
 */
import { el } from '../../../doc/element.js';
import { sendDoc } from '../../../http/send.js';
import { API_VERSIONS, type Resource } from '../resource.js';

export const versionsResource: Resource = {
  public: true,
  methods: {
    GET: (req) =>
      sendDoc(
        req.reply,
        req.format,
        200,
        el(
          'versions',
          API_VERSIONS.map((v) => el('version', v)),
        ),
        ['version'],
      ),
  },
};
