/** A delegation of the development user's proxy, made through REST as a client makes it. */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { signProxyFromCsr } from '../../src/pki/issue.js';
import type { Client } from './service.js';

/** Delegates `userproxy.pem` of `pkiDir` through `client`; the delegation's id. */
export async function delegateUserProxy(client: Client, pkiDir: string): Promise<string> {
  const r = await client.req('POST', '/rest/1.1/delegations?action=new', '', { accept: '' });
  assert.equal(r.status, 201, r.text);
  const id = String(r.headers.location).split('/').pop() as string;
  const userProxy = readFileSync(join(pkiDir, 'userproxy.pem'), 'utf8');
  const signed = await signProxyFromCsr(r.text, userProxy, userProxy);
  assert.equal((await client.req('PUT', `/rest/1.1/delegations/${id}`, signed.chainPem)).status, 200);
  return id;
}
