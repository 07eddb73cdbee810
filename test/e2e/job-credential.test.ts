// The job's own copy of its delegated credential through the running service: a job
// with a token delegation finds it in BEARER_TOKEN_FILE (mode 0600), sees the new token
// when the delegation is renewed while it runs, and the copy is gone once it ended; a
// job without a delegation gets no such variable.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { untilValue as until } from '../helpers/poll.js';
import { Client, removeDir, startCeres, stopCeres, type RunningCeres } from '../helpers/service.js';
import { fakeJwt } from '../delegations/fixture.js';
import { signProxyFromCsr } from '../../src/pki/issue.js';
import { pemBlocks } from '../../src/pki/certificate.js';

describe("a job's copy of its delegated credential", () => {
  let ceres: RunningCeres;
  let client: Client;
  before(async () => {
    ceres = await startCeres();
    client = Client.forUser(ceres);
  });
  after(async () => {
    await client?.close();
    if (ceres) await stopCeres(ceres);
    if (ceres) removeDir(ceres.stateDir);
  });

  const file = async (job: string, name: string): Promise<string | undefined> => {
    const r = await client.req('GET', `/rest/1.1/jobs/${job}/session/${name}`, undefined, { accept: '*/*' });
    return r.status === 200 ? r.text : undefined;
  };

  it('is given as BEARER_TOKEN_FILE, follows a renewal while the job runs, and goes when the job ends', async () => {
    const t1 = fakeJwt({ sub: 'first' });
    const made = await client.req('POST', '/rest/1.1/delegations?action=new&type=jwt', undefined, {
      'x-delegation': `bearer ${t1}`,
    });
    assert.equal(made.status, 201, made.text);
    const delegation = String(made.headers.location).split('/').pop() as string;
    const script = [
      'echo "$BEARER_TOKEN_FILE" > path',
      'stat -c %a "$BEARER_TOKEN_FILE" > mode',
      'cp "$BEARER_TOKEN_FILE" first',
      'n=0; while cmp -s "$BEARER_TOKEN_FILE" first && [ $n -lt 600 ]; do sleep 0.1; n=$((n+1)); done',
      'cp "$BEARER_TOKEN_FILE" second',
    ].join('; ');
    const [item] = await client.submit(
      `&(executable="/bin/sh")(arguments="-c" "${script.replaceAll('"', '""')}")(delegationid="${delegation}")(stderr="e")(outputfiles=("second" "")("e" ""))`,
    );
    const job = item.id as string;
    assert.equal(await until('the first copy', () => file(job, 'first')), t1);
    const path = (await file(job, 'path'))?.trim() ?? '';
    assert.equal(path, join(ceres.stateDir, 'job-credentials', job, 'token'));
    assert.equal((await file(job, 'mode'))?.trim(), '600');

    const t2 = fakeJwt({ sub: 'second' });
    const renewed = await client.req('POST', `/rest/1.1/delegations/${delegation}?action=renew`, undefined, {
      'x-token-delegation': `Bearer ${t2}`,
    });
    assert.equal(renewed.status, 200, renewed.text);
    assert.deepEqual([...(await client.waitFor([job], ['FINISHED', 'FAILED'])).values()], ['FINISHED']);
    assert.equal(
      await file(job, 'second'),
      t2,
      `the running job saw the renewed token (stderr: ${await file(job, 'e')})`,
    );
    assert.equal(
      existsSync(join(ceres.stateDir, 'job-credentials', job)),
      false,
      'the copy is removed when the job ended',
    );
  });

  /** A delegation request (new or renew) signed with the dev user's proxy and PUT; the signed proxy's PEM. */
  async function delegateX509(
    query: string,
    path = '/rest/1.1/delegations',
  ): Promise<{ id: string; proxyPem: string }> {
    const r = await client.req('POST', `${path}?action=${query}`, '', { accept: '' });
    assert.ok(r.status === 200 || r.status === 201, r.text);
    // new: 201 with the Location of the delegation; renew: the same delegation.
    const id =
      query === 'new' ? (String(r.headers.location).split('/').pop() as string) : (path.split('/').pop() as string);
    const userProxy = readFileSync(join(ceres.pkiDir, 'userproxy.pem'), 'utf8');
    const signed = await signProxyFromCsr(r.text, userProxy, userProxy);
    const put = await client.req('PUT', `/rest/1.1/delegations/${id}`, signed.chainPem);
    assert.equal(put.status, 200, `${query}: ${put.text}`);
    return { id, proxyPem: signed.certPem };
  }

  it('an X.509 delegation is given as X509_USER_PROXY (proxy, key, chain) and follows a renewal', async () => {
    const first = await delegateX509('new');
    const script = [
      'cp "$X509_USER_PROXY" first',
      'n=0; while cmp -s "$X509_USER_PROXY" first && [ $n -lt 600 ]; do sleep 0.1; n=$((n+1)); done',
      'cp "$X509_USER_PROXY" second',
    ].join('; ');
    const [item] = await client.submit(
      `&(executable="/bin/sh")(arguments="-c" "${script.replaceAll('"', '""')}")(delegationid="${first.id}")(outputfiles=("first" "")("second" ""))`,
    );
    const job = item.id as string;
    const f1 = await until('the first copy', () => file(job, 'first'));
    const blocks = (t: string): string[] => [...t.matchAll(/-----BEGIN ([A-Z ]+)-----/g)].map((m) => m[1] as string);
    assert.deepEqual(
      blocks(f1).slice(0, 2),
      ['CERTIFICATE', 'RSA PRIVATE KEY'],
      'the proxy, then its key, then the chain',
    );
    assert.deepEqual(pemBlocks(f1)[0], pemBlocks(first.proxyPem)[0]);
    const renewed = await delegateX509('renew', `/rest/1.1/delegations/${first.id}`);
    assert.deepEqual([...(await client.waitFor([job], ['FINISHED', 'FAILED'])).values()], ['FINISHED']);
    const f2 = (await file(job, 'second')) ?? '';
    assert.deepEqual(pemBlocks(f2)[0], pemBlocks(renewed.proxyPem)[0], 'the running job saw the renewed proxy');
  });

  it('a job without a delegation gets neither variable', async () => {
    const [item] = await client.submit(
      '&(executable="/bin/sh")(arguments="-c" "echo [$X509_USER_PROXY][$BEARER_TOKEN_FILE]")(stdout="o")',
    );
    assert.deepEqual([...(await client.waitFor([item.id], ['FINISHED', 'FAILED'])).values()], ['FINISHED']);
    assert.equal(await file(item.id, 'o'), '[][]\n');
  });
});
