// Screenshots of the web interface's main pages at desktop and phone widths, for the
// README (docs/images/). Runs the built service with a fresh state and the dev PKI:
//   npm run build && node scripts/web-screenshots.mjs
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import { Client, startCeres, stopCeres, removeDir, tempDir } from '../dist/test/helpers/service.js';
import { addDevUser, initDevPki } from '../dist/src/pki/dev-pki.js';
import { signProxyFromCsr } from '../dist/src/pki/issue.js';
import { readFileSync } from 'node:fs';

const out = new URL('../docs/images/', import.meta.url).pathname;
mkdirSync(out, { recursive: true });
// The PKI is made first, so a second user and a site administrator can be configured.
const stateDir = tempDir('shots');
const pkiDir = join(stateDir, 'pki');
await initDevPki(pkiDir);
await addDevUser(pkiDir, 'bob');
const admin = await addDevUser(pkiDir, 'siteadmin');
// The series ticks every second here, so the overview's pictures have figures at once.
const ceres = await startCeres({
  stateDir,
  config: {
    web: { admins: [admin.dn], siteSeriesTickSeconds: 1 },
    cluster: {
      queues: [
        { name: 'main', description: 'Jobs up to a day', maxWallTimeSeconds: 86400 },
        { name: 'short', maxWallTimeSeconds: 3600 },
      ],
      runtimeEnvironments: [{ name: 'APPS/HEP/ATLAS-SITE-1.0', description: 'ATLAS site setup' }],
    },
  },
});
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
  args: ['--no-sandbox'],
});
try {
  const client = Client.forUser(ceres);
  const [done] = await client.submit(
    '&(executable="/bin/sh")(arguments="-c" "echo hello from Ceres")(stdout="out.txt")(stderr="err.txt")(jobname="hello")',
  );
  // A delegation the long job uses, for the delegations page.
  const d = await client.req('POST', '/rest/1.1/delegations?action=new', '', { accept: '' });
  const delegation = String(d.headers.location).split('/').pop();
  const proxy = readFileSync(join(pkiDir, 'userproxy.pem'), 'utf8');
  await client.req(
    'PUT',
    `/rest/1.1/delegations/${delegation}`,
    (await signProxyFromCsr(d.text, proxy, proxy)).chainPem,
  );
  const [long] = await client.submit(
    `&(executable="/bin/sh")(arguments="-c" "sleep 600")(jobname="long")(delegationid="${delegation}")`,
  );
  await client.submit('&(executable="/bin/sh")(arguments="-c" "exit 3")(jobname="fails")');
  const bob = Client.forUser(ceres, 'bob-proxy.pem');
  const [bobs] = await bob.submit('&(executable="/bin/sh")(arguments="-c" "sleep 600")(jobname="bobs")');
  await client.waitFor?.([done.id], ['FINISHED']);
  await new Promise((r) => setTimeout(r, 4000));
  const contextOf = (cert, key) =>
    browser.newContext({
      ignoreHTTPSErrors: true,
      clientCertificates: [
        { origin: new URL(ceres.url).origin, certPath: join(ceres.pkiDir, cert), keyPath: join(ceres.pkiDir, key) },
      ],
    });
  const user = await (await contextOf('usercert.pem', 'userkey.pem')).newPage();
  const adminPage = await (await contextOf('siteadmin-cert.pem', 'siteadmin-key.pem')).newPage();
  const shots = [
    { name: 'overview', page: user, path: '/', width: 1280, fullPage: true },
    { name: 'overview-phone', page: user, path: '/#pics', width: 390 },
    { name: 'overview-dark', page: adminPage, path: '/', width: 1280, fullPage: true, dark: true },
    { name: 'info', page: user, path: '/web/info', width: 1280, fullPage: true },
    { name: 'info-phone', page: user, path: '/web/info', width: 390 },
    { name: 'jobs', page: user, path: '/web/jobs', width: 1280 },
    { name: 'job', page: user, path: `/web/jobs/${done.id}`, width: 1280, fullPage: true },
    { name: 'jobs-phone', page: user, path: '/web/jobs', width: 390 },
    { name: 'job-phone', page: user, path: `/web/jobs/${done.id}`, width: 390 },
    { name: 'admin-jobs', page: adminPage, path: '/web/jobs', width: 1280 },
    { name: 'delegations', page: user, path: '/web/delegations', width: 1280 },
    { name: 'delegations-phone', page: user, path: '/web/delegations', width: 390 },
  ];
  shots.push(
    { name: 'submit', page: user, path: '/web/submit', width: 1280, fullPage: true },
    { name: 'submit-phone', page: user, path: '/web/submit', width: 390 },
    // A refused description comes back in the form, each message beside its line.
    {
      name: 'submit-refused',
      page: user,
      path: '/web/submit',
      width: 1280,
      fullPage: true,
      fill: '&(executable="/bin/echo")\n (arguments="hello")\n (wallTime="ten minutes")\n (stdout="out.txt")',
    },
  );
  for (const s of shots) {
    await s.page.setViewportSize({ width: s.width, height: s.width > 500 ? 800 : 844 });
    await s.page.emulateMedia({ colorScheme: s.dark === true ? 'dark' : 'light' });
    await s.page.goto(`${ceres.url}${s.path}`);
    if (s.fill !== undefined) {
      await s.page.fill('#description', s.fill);
      await Promise.all([s.page.waitForNavigation(), s.page.click('button[type=submit]')]);
    }
    await s.page.screenshot({ path: join(out, `web-${s.name}.png`), fullPage: s.fullPage === true });
  }
  // The long jobs are killed: the fork backend's processes would outlive the service.
  await client.action('kill', [long.id]);
  await bob.action('kill', [bobs.id]);
  await client.waitFor([long.id], ['KILLED']);
  await bob.waitFor([bobs.id], ['KILLED']);
  await bob.close();
} finally {
  await browser.close();
  await stopCeres(ceres);
  removeDir(ceres.stateDir);
}
