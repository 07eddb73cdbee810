/**
 * A resource BDII on loopback serving Ceres's GLUE2 tree, with the real parts: the
 * service writes its LDIF (infosys.ldap), Debian's bdii-update loop runs Ceres's
 * provider as `openldap` and loads a private slapd with the GLUE 2.0 schema, and the
 * clients read it: ldapsearch, the ARC client (arcinfo through the LDAP GLUE2 plugin
 * finds the REST endpoint) and archery-manage (ARCHERY records for the CE).
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { removeDir, startCeres, stopCeres, tempDir, type RunningCeres } from '../helpers/service.js';
import { assertRoot, skipUnlessRoot } from '../helpers/local-accounts.js';
import { BdiiUpdate, entriesOf, freePort, ldapSkip, PROVIDER_SCRIPT, run, Slapd, valuesOf } from '../helpers/slapd.js';
import { until } from '../helpers/poll.js';
import { onPath } from '../interop/arc-cli.js';

const skip = skipUnlessRoot('the resource BDII test (the LDIF file belongs to the openldap group)') || ldapSkip(true);
const BASE = 'GLUE2GroupID=resource,o=glue';

describe(
  'resource BDII: Ceres -> LDIF -> bdii-update -> slapd -> ldapsearch, arcinfo, archery-manage',
  { skip },
  () => {
    let dir: string;
    let slapd: Slapd;
    let bdii: BdiiUpdate | undefined;
    let ceres: RunningCeres | undefined;
    let ldifFile: string;

    const diagnostics = (): string =>
      `\n--- bdii-update.log:\n${bdii?.log().slice(-3000) ?? ''}\n--- ceres:\n${ceres?.output().slice(-3000) ?? ''}`;

    before(async () => {
      assertRoot();
      dir = tempDir('bdii');
      mkdirSync(join(dir, 'slapd'));
      slapd = await Slapd.start(join(dir, 'slapd'));
      ldifFile = join(dir, 'infosys', 'glue2.ldif');
      // The listen address in the configuration too: `ceres info ldif` reads it there.
      const listen = `127.0.0.1:${await freePort()}`;
      ceres = await startCeres({
        listen,
        config: {
          listen,
          cluster: {
            queues: [{ name: 'main' }, { name: 'grid', allow: ['atlas'] }],
            runtimeEnvironments: [{ name: 'ENV/PROXY' }],
          },
          authorization: {
            groups: [
              { name: 'atlas', match: [{ voms: '/atlas' }] },
              { name: 'everyone', match: [{ all: true }] },
            ],
            allow: ['atlas', 'everyone'],
          },
          infosys: {
            ldap: {
              enabled: true,
              port: slapd.port,
              bindAddress: '127.0.0.1',
              ldifFile,
              readerGroup: 'openldap',
              updateIntervalSeconds: 5,
            },
          },
        },
      });
      await until(() => {
        try {
          return statSync(ldifFile).size > 0;
        } catch {
          return false;
        }
      }, 'the service writes the LDIF');
      bdii = await BdiiUpdate.start(
        join(dir, 'bdii'),
        slapd,
        PROVIDER_SCRIPT,
        { CERES_GLUE2_LDIF: ldifFile },
        { user: 'openldap' },
      );
    });

    after(async () => {
      await bdii?.stop();
      if (ceres) await stopCeres(ceres);
      await slapd?.stop();
      if (dir) removeDir(dir);
    });

    it('the LDIF file: 0640, group openldap, in a 0750 folder of that group; the provider prints it as openldap only', async () => {
      const gid = Number(execFileSync('getent', ['group', 'openldap'], { encoding: 'utf8' }).split(':')[2]);
      const st = statSync(ldifFile);
      assert.equal(st.mode & 0o777, 0o640);
      assert.equal(st.gid, gid);
      const d = statSync(join(dir, 'infosys'));
      assert.equal(d.mode & 0o777, 0o750);
      assert.equal(d.gid, gid);
      const asBdii = await run('runuser', [
        '-u',
        'openldap',
        '--',
        'env',
        `CERES_GLUE2_LDIF=${ldifFile}`,
        PROVIDER_SCRIPT,
      ]);
      assert.equal(asBdii.code, 0, asBdii.stderr);
      assert.match(asBdii.stdout, /^dn: o=glue$/m);
      const other = await run('runuser', [
        '-u',
        'nobody',
        '--',
        'env',
        `CERES_GLUE2_LDIF=${ldifFile}`,
        PROVIDER_SCRIPT,
      ]);
      assert.notEqual(other.code, 0, 'an account outside the group reads the LDIF');
      assert.match(other.stderr, /cannot read/);
    });

    it('ldapsearch finds the REST endpoints (1.0, 1.1) with the service URL, loaded by the bdii-update loop', async () => {
      let out = '';
      await until(
        async () => {
          out = await slapd.search(BASE, '(GLUE2EndpointInterfaceName=org.nordugrid.arcrest)', [
            'GLUE2EndpointURL',
            'GLUE2EndpointInterfaceVersion',
            'GLUE2EndpointHealthState',
            'GLUE2EndpointServingState',
          ]);
          return entriesOf(out).length === 2;
        },
        `the REST endpoints in LDAP${diagnostics()}`,
        60_000,
      );
      const eps = entriesOf(out);
      assert.deepEqual(
        eps.map((e) => valuesOf(e, 'GLUE2EndpointURL')[0]),
        [ceres!.url, ceres!.url],
      );
      assert.deepEqual(eps.map((e) => valuesOf(e, 'GLUE2EndpointInterfaceVersion')[0]).sort(), ['1.0', '1.1']);
      for (const e of eps) {
        assert.deepEqual(valuesOf(e, 'GLUE2EndpointHealthState'), ['ok']);
        assert.deepEqual(valuesOf(e, 'GLUE2EndpointServingState'), ['production']);
      }
      const ldap = entriesOf(
        await slapd.search(BASE, '(GLUE2EndpointInterfaceName=org.nordugrid.ldapglue2)', ['GLUE2EndpointURL']),
      );
      assert.deepEqual(valuesOf(ldap[0] ?? '', 'GLUE2EndpointURL'), [`ldap://127.0.0.1:${slapd.port}/o=glue`]);
    });

    it('shares per queue and per VO, access and mapping policies from the authorization', async () => {
      const shares = entriesOf(
        await slapd.search(BASE, '(objectClass=GLUE2ComputingShare)', [
          'GLUE2EntityName',
          'GLUE2ComputingShareMappingQueue',
        ]),
      );
      assert.deepEqual(shares.map((s) => valuesOf(s, 'GLUE2EntityName')[0]).sort(), [
        'grid',
        'grid_atlas',
        'main',
        'main_atlas',
      ]);
      const mapping = entriesOf(await slapd.search(BASE, '(objectClass=GLUE2MappingPolicy)', ['GLUE2PolicyRule']));
      assert.deepEqual(
        mapping.map((m) => valuesOf(m, 'GLUE2PolicyRule')[0]),
        ['vo:atlas', 'vo:atlas'],
      );
      const access = entriesOf(await slapd.search(BASE, '(objectClass=GLUE2AccessPolicy)', ['GLUE2PolicyRule']));
      assert.equal(access.length, 3);
      const apps = entriesOf(
        await slapd.search(BASE, '(objectClass=GLUE2ApplicationEnvironment)', ['GLUE2ApplicationEnvironmentAppName']),
      );
      assert.deepEqual(valuesOf(apps[0] ?? '', 'GLUE2ApplicationEnvironmentAppName'), ['ENV/PROXY']);
    });

    it('the same content as the REST info document (one model)', async () => {
      const shown = await run(process.execPath, [
        join(import.meta.dirname, '../../src/cli/main.js'),
        'info',
        'ldif',
        '--config',
        join(ceres!.stateDir, 'test-config.json'),
        '--state-dir',
        ceres!.stateDir,
      ]);
      assert.equal(shown.code, 0, shown.stderr);
      const file = readFileSync(ldifFile, 'utf8');
      // Same DNs in the same order; values differ only in time stamps and live figures.
      const dns = (t: string): string[] => [...t.matchAll(/^dn: (.*)$/gm)].map((m) => m[1]!);
      assert.deepEqual(dns(shown.stdout), dns(file));
    });

    it('the loop follows the service: a later rendering replaces the entries (CreationTime moves on)', async () => {
      const created = async (): Promise<string | undefined> =>
        valuesOf(
          await slapd.search(BASE, '(objectClass=GLUE2ComputingService)', ['GLUE2EntityCreationTime']),
          'GLUE2EntityCreationTime',
        )[0];
      const first = await created();
      assert.ok(first !== undefined);
      await until(async () => (await created()) !== first, `a newer rendering in LDAP${diagnostics()}`, 60_000);
    });

    it(
      'arcinfo finds the REST endpoint through the LDAP GLUE2 tree',
      { skip: onPath('arcinfo') ? false : 'no arcinfo' },
      async () => {
        const work = join(dir, 'arc');
        mkdirSync(work, { recursive: true });
        const proxy = join(work, 'proxy.pem');
        const caDir = join(ceres!.pkiDir, 'certificates');
        const env = { ...process.env, HOME: work, LC_ALL: 'C', X509_USER_PROXY: proxy, X509_CERT_DIR: caDir };
        writeFileSync(
          join(work, 'client.conf'),
          `[common]\nproxypath = ${proxy}\ncacertificatesdirectory = ${caDir}\n`,
        );
        const p = await run(
          'arcproxy',
          [
            '-C',
            join(ceres!.pkiDir, 'usercert.pem'),
            '-K',
            join(ceres!.pkiDir, 'userkey.pem'),
            '-T',
            caDir,
            '-P',
            proxy,
          ],
          undefined,
          env,
        );
        assert.equal(p.code, 0, p.stderr);
        const r = await run(
          'arcinfo',
          [
            '-z',
            join(work, 'client.conf'),
            '-l',
            '-c',
            `ldap://127.0.0.1:${slapd.port}`,
            '-I',
            'org.nordugrid.ldapglue2',
          ],
          undefined,
          env,
        );
        const text = r.stdout + r.stderr;
        assert.equal(r.code, 0, text);
        // One endpoint per REST version, found from the LDAP tree alone.
        const rest = [...text.matchAll(/^\s*URL: (\S+)\n\s*Interface: org\.nordugrid\.arcrest$/gm)].map((m) => m[1]);
        assert.deepEqual(rest, [ceres!.url, ceres!.url], text);
        assert.match(text, /Mapping queue: main/, text);
      },
    );

    it(
      'archery-manage makes the ARCHERY records of the CE from the LDAP tree',
      { skip: onPath('archery-manage', `${process.env.PATH ?? ''}:/usr/sbin`) ? false : 'no archery-manage' },
      async () => {
        const source = join(dir, 'archery.json');
        writeFileSync(
          source,
          JSON.stringify({ 'external-source': { sitebdii: `ldap://127.0.0.1:${slapd.port}/${BASE}` } }),
        );
        const r = await run('/usr/sbin/archery-manage', [
          '-s',
          `json:${source}`,
          '-o',
          'zonefile',
          '--domain',
          'archery.example.org',
        ]);
        assert.equal(r.code, 0, r.stdout + r.stderr);
        assert.match(
          r.stdout,
          /TXT "o=service t=org\.nordugrid\.arex id=urn:ogf:ComputingService:127\.0\.0\.1:arex"/,
          r.stdout + r.stderr,
        );
        assert.match(
          r.stdout,
          new RegExp(`TXT "u=${ceres!.url.replace(/[.]/g, '\\.')} t=org\\.nordugrid\\.arcrest"`),
          r.stdout,
        );
        assert.match(
          r.stdout,
          /_archery\.archery\.example\.org\.\s+\d+\s+TXT "u=dns:\/\/\S+ t=archery\.service"/,
          r.stdout,
        );
        assert.doesNotMatch(r.stdout, /s=0/, 'an endpoint published as inactive');
      },
    );
  },
);
