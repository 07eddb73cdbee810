import { Type } from '@sinclair/typebox';
import { PATH } from '../paths.js';

/**
 * `infosys.ldap`: GLUE2 in LDAP for a resource BDII (docs/operations.md, "Information
 * system"). The service writes the LDIF of its GLUE2 tree to a file that only the BDII's
 * account may read besides the service; BDII's provider prints it.
 */
export const infosysSection = {
  infosys: Type.Object(
    {
      ldap: Type.Object(
        {
          enabled: Type.Boolean({
            default: false,
            description:
              'Write the GLUE2 tree as LDIF for a resource BDII and publish its LDAP endpoint (org.nordugrid.ldapglue2) in the info document',
          }),
          port: Type.Integer({
            default: 2135,
            minimum: 1,
            maximum: 65535,
            description:
              "Port of the resource BDII's slapd, published in the LDAP endpoint's URL (ldap://HOST:PORT/o=glue); 2135 is where archery-manage and ARC clients look",
          }),
          bindAddress: Type.String({
            default: '',
            description:
              "Host in the published LDAP URL, the address the BDII's slapd listens on; empty: the service's public host name",
          }),
          ldifFile: Type.String({
            ...PATH,
            default: '/var/lib/ceres-infosys/glue2.ldif',
            description:
              'Where the service writes the LDIF (replaced atomically, mode 0640, group readerGroup; its folder is made 0750). Keep it out of the state directory, which the BDII account cannot enter',
          }),
          readerGroup: Type.String({
            default: 'openldap',
            minLength: 1,
            description:
              "Group of the LDIF file: the BDII's account (Debian's bdii runs its providers as openldap). The service must be root or a member",
          }),
          updateIntervalSeconds: Type.Number({
            default: 60,
            minimum: 5,
            description:
              'How often the LDIF is rewritten (A-REX: about a minute; BDII reads it every BDII_BREATHE_TIME)',
          }),
        },
        { default: {}, additionalProperties: false },
      ),
    },
    { default: {}, additionalProperties: false },
  ),
};
