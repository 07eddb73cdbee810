/**
 * `{base}/delegations` and `{base}/delegations/<id>` (spec §4.5). Statuses are those
 * the real clients check (A-REX §5.3, §9.2, §9.5, §9.9), which
 * differ from the spec's text in three places (docs/delegations.md):
 *
 *   GET|HEAD delegations             200 list; 1.1 `type=x509|jwt` filter; 1.0: x509 only, no `type`
 *   POST delegations?action=new      x509: 201 + Location + CSR (application/x-pem-file)
 *                                    jwt (1.1): 201 + Location, empty (spec: 200; ARC 7 client and pyarcrest need 201)
 *   PUT  delegations/<id>            200, empty: signed proxy + chain stored (a lone proxy gets the
 *                                    chain the caller presented on its TLS connection, as in A-REX)
 *   POST delegations/<id>?action=get     200 x-pem-file (certificates) | application/jwt (token)
 *   POST delegations/<id>?action=renew   x509: 201 + CSR in both versions (1.0 text: 200; clients need 201)
 *                                        jwt: 200 (spec, pyarcrest); 201 when the request says type=jwt (ARC 7 client)
 *   POST delegations/<id>?action=delete  202, empty (spec: 200; pyarcrest needs 202, A-REX answers 202)
 *
 * Other methods: 405 + Allow from the method tables. Request bodies of POST actions are
 * read (bounded) and ignored, so a connection stays usable.
 */
import { TLSSocket } from 'node:tls';
import { ceError } from '../../../errors/ce-error.js';
import { readBody } from '../../../http/body.js';
import { readPeerChain } from '../../../http/peer-chain.js';
import { sendDoc, sendEmpty } from '../../../http/send.js';
import { el, type XmlElement } from '../../../doc/element.js';
import type { DelegationService } from '../../../delegations/delegation-service.js';
import { DELEGATION_TYPES, type DelegationListItem, type DelegationType } from '../../../vocabulary/delegations.js';
import type { ApiVersion, Resource, RestRequest } from '../resource.js';
import { delegatedToken } from './token-header.js';

export interface DelegationResourceOptions {
  readonly service: DelegationService;
  /** Largest PUT body (signed proxy + chain). */
  readonly maxCertificateBodyBytes: number;
}

/** POST actions carry no body; whatever comes is read up to this and dropped. */
const MAX_ACTION_BODY_BYTES = 64 * 1024;
const PEM = 'application/x-pem-file';

export function delegationsResources(o: DelegationResourceOptions): { collection: Resource; item: Resource } {
  const { service } = o;

  const list = (req: RestRequest) => {
    const caller = req.caller();
    // 1.0 knows only X.509 delegations: listing tokens there would hand 1.0 clients
    // (DIRAC reads every listed delegation as a proxy) something they cannot use.
    const type = req.version === '1.1' ? typeParam(req.query.get('type')) : 'x509';
    return sendDoc(req.reply, req.format, 200, listDocument(service.list(caller.owner, type), req.version), [
      'delegation',
    ]);
  };

  const create = async (req: RestRequest) => {
    const caller = req.caller();
    requireAction(req, ['new']);
    const type = requestedType(req) ?? 'x509';
    await readBody(req.raw, MAX_ACTION_BODY_BYTES);
    if (type === 'x509') {
      const { id, csrPem } = await service.createX509(caller.owner);
      return sendPem(req.reply.header('location', locationOf(req, id)), 201, csrPem);
    }
    const token = delegatedToken(req.raw);
    if (token === undefined)
      throw ceError(
        'CE_ERR_DELEG_TOKEN_MISSING',
        'Missing X-Delegation header (bearer <JWT>) in the jwt delegation request',
      );
    const { id } = await service.createJwt(caller.owner, token);
    return sendEmpty(req.reply.header('location', locationOf(req, id)), 201);
  };

  const act = async (req: RestRequest) => {
    const caller = req.caller();
    const id = idOf(req);
    const action = requireAction(req, ['get', 'renew', 'delete']);
    await readBody(req.raw, MAX_ACTION_BODY_BYTES);
    switch (action) {
      case 'get': {
        const part = await service.publicPart(caller.owner, id);
        if (part.type === 'x509') return sendPem(req.reply, 200, part.pem);
        return req.reply.code(200).header('content-type', 'application/jwt').send(Buffer.from(part.token, 'utf8'));
      }
      case 'renew': {
        const asked = requestedType(req);
        const type = service.typeOf(caller.owner, id);
        if (asked !== undefined && asked !== type)
          throw ceError(
            'CE_ERR_DELEG_TYPE_MISMATCH',
            `Delegation ${id} is of type ${type}, the request asks for ${asked}`,
          );
        if (type === 'x509') return sendPem(req.reply, 201, (await service.renewX509(caller.owner, id)).csrPem);
        const token = delegatedToken(req.raw);
        if (token === undefined)
          throw ceError(
            'CE_ERR_DELEG_TOKEN_MISSING',
            'Missing X-Delegation header (bearer <JWT>) in the jwt renewal request',
          );
        await service.renewJwt(caller.owner, id, token);
        // The ARC 7 client renews with `type=jwt` and accepts only 201; pyarcrest sends
        // no type and accepts only 200, which is also what the spec says.
        return sendEmpty(req.reply, asked === 'jwt' ? 201 : 200);
      }
      default:
        await service.remove(caller.owner, id);
        return sendEmpty(req.reply, 202);
    }
  };

  const put = async (req: RestRequest) => {
    const caller = req.caller();
    const id = idOf(req);
    const body = await readBody(req.raw, o.maxCertificateBodyBytes);
    // The chain this connection was authenticated with (kept on the socket), for a PUT
    // carrying the signed proxy alone; none for callers without a client certificate.
    const socket = req.raw.socket;
    const callerChain = caller.kind === 'x509' && socket instanceof TLSSocket ? readPeerChain(socket).ders : [];
    await service.acceptCertificate(caller.owner, id, body, callerChain, caller.kind === 'token');
    return sendEmpty(req.reply, 200);
  };

  return {
    collection: { methods: { GET: list, POST: create } },
    item: { methods: { POST: act, PUT: put } },
  };
}

export function listDocument(items: readonly DelegationListItem[], version: ApiVersion): XmlElement {
  return el(
    'delegations',
    items.map((d) => el('delegation', [el('id', d.id), version === '1.1' && el('type', d.type)])),
  );
}

/** A-REX style Location: the path of the new delegation (clients take its last segment). */
function locationOf(req: RestRequest, id: string): string {
  return `${req.basePath}/delegations/${id}`;
}

function sendPem(reply: RestRequest['reply'], status: number, pem: string) {
  // A Buffer keeps Fastify from appending a charset to the media type.
  return reply.code(status).header('content-type', PEM).send(Buffer.from(pem, 'utf8'));
}

function requireAction<A extends string>(req: RestRequest, allowed: readonly A[]): A {
  const a = req.query.get('action');
  if (a === undefined || a === '')
    throw ceError('CE_ERR_HTTP_ACTION_MISSING', `missing action parameter (one of ${allowed.join(', ')})`);
  if (!(allowed as readonly string[]).includes(a))
    throw ceError('CE_ERR_HTTP_ACTION_UNKNOWN', `unknown action '${a.slice(0, 32)}' (one of ${allowed.join(', ')})`);
  return a as A;
}

/** `type` of POST requests; undefined when absent. 1.0 has no jwt delegations. */
function requestedType(req: RestRequest): DelegationType | undefined {
  const t = typeParam(req.query.get('type'));
  if (t === 'jwt' && req.version === '1.0')
    throw ceError(
      'CE_ERR_DELEG_TYPE_NOT_IN_VERSION',
      'Delegation type jwt needs interface version 1.1 (use /rest/1.1/delegations)',
    );
  return t;
}

function typeParam(t: string | undefined): DelegationType | undefined {
  if (t === undefined || t === '') return undefined;
  if (!(DELEGATION_TYPES as readonly string[]).includes(t))
    throw ceError('CE_ERR_DELEG_TYPE_UNKNOWN', `Unknown delegation type '${t.slice(0, 32)}' (x509 or jwt)`);
  return t as DelegationType;
}

/** The delegation id from the path; anything that does not decode cannot be one of ours. */
function idOf(req: RestRequest): string {
  const raw = req.rest[0] ?? '';
  try {
    return decodeURIComponent(raw);
  } catch {
    throw ceError('CE_ERR_DELEG_NOT_FOUND');
  }
}
