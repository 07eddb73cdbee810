/**
 * The RFC 3820 proxyCertInfo extension (id-pe-proxyCertInfo, 1.3.6.1.5.5.7.1.14):
 *
 *   ProxyCertInfo ::= SEQUENCE {
 *     pCPathLenConstraint  INTEGER (0..MAX) OPTIONAL,
 *     proxyPolicy          ProxyPolicy }
 *   ProxyPolicy ::= SEQUENCE {
 *     policyLanguage  OBJECT IDENTIFIER,
 *     policy          OCTET STRING OPTIONAL }
 *
 * It MUST be critical (RFC 3820 3.8): a relying party that does not understand
 * proxies must then refuse the certificate instead of mistaking it for the user's.
 */
import * as asn1js from 'asn1js';
import { DerError, TAG, children, content, decodeOid, decodeSmallUint, expectTag, type Tlv } from './der.js';

export const OID_PROXY_CERT_INFO = '1.3.6.1.5.5.7.1.14';

export const PROXY_POLICY = {
  /** id-ppl-inheritAll: the proxy carries all rights of its issuer (what arcproxy makes). */
  inheritAll: '1.3.6.1.5.5.7.21.1',
  /** id-ppl-independent: the proxy carries no rights of its issuer. */
  independent: '1.3.6.1.5.5.7.21.2',
  /** Globus "limited proxy" policy language. */
  limited: '1.3.6.1.4.1.3536.1.1.1.9',
} as const;

export interface ProxyCertInfo {
  readonly pathLen?: number;
  readonly policyLanguage: string;
  readonly policy?: Uint8Array;
}

export function decodeProxyCertInfo(t: Tlv): ProxyCertInfo {
  const parts = children(expectTag(t, TAG.SEQUENCE, 'proxyCertInfo'));
  let pathLen: number | undefined;
  let k = 0;
  if (parts[0]?.tag === TAG.INTEGER) {
    pathLen = decodeSmallUint(parts[0]);
    k = 1;
  }
  const policy = expectTag(parts[k], TAG.SEQUENCE, 'proxyPolicy');
  if (parts.length !== k + 1) throw new DerError('proxyCertInfo: unexpected element');
  const pp = children(policy);
  const language = decodeOid(pp[0] as Tlv);
  if (pp.length > 2) throw new DerError('proxyPolicy: unexpected element');
  const body = pp[1] === undefined ? undefined : content(expectTag(pp[1], TAG.OCTET_STRING, 'proxy policy'));
  return {
    ...(pathLen === undefined ? {} : { pathLen }),
    policyLanguage: language,
    ...(body === undefined ? {} : { policy: body }),
  };
}

/** DER of a ProxyCertInfo value (the extension's extnValue contents). */
export function encodeProxyCertInfo(info: ProxyCertInfo): Buffer {
  const policy: asn1js.AsnType[] = [new asn1js.ObjectIdentifier({ value: info.policyLanguage })];
  if (info.policy !== undefined) policy.push(new asn1js.OctetString({ valueHex: info.policy }));
  const outer: asn1js.AsnType[] = [];
  if (info.pathLen !== undefined) outer.push(new asn1js.Integer({ value: info.pathLen }));
  outer.push(new asn1js.Sequence({ value: policy }));
  return Buffer.from(new asn1js.Sequence({ value: outer }).toBER(false));
}
