// Screenshots of the web interface's main pages at desktop and phone widths, for the
// README (docs/images/). Runs the built service with a fresh state and the dev PKI:
//   npm run build && node scripts/web-screenshots.mjs
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import { Client, startCeres, stopCeres, removeDir } from '../dist/test/helpers/service.js';

const out = new URL('../docs/images/', import.meta.url).pathname;
mkdirSync(out, { recursive: true });
const ceres = await startCeres();
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
  args: ['--no-sandbox'],
});
try {
  const client = Client.forUser(ceres);
  const [done] = await client.submit(
    '&(executable="/bin/sh")(arguments="-c" "echo hello from Ceres")(stdout="out.txt")(stderr="err.txt")(jobname="hello")',
  );
  await client.submit('&(executable="/bin/sh")(arguments="-c" "sleep 600")(jobname="long")');
  await client.submit('&(executable="/bin/sh")(arguments="-c" "exit 3")(jobname="fails")');
  await client.waitFor?.([done.id], ['FINISHED']);
  await new Promise((r) => setTimeout(r, 4000));
  const ctx = await browser.newContext({
    ignoreHTTPSErrors: true,
    clientCertificates: [
      {
        origin: new URL(ceres.url).origin,
        certPath: join(ceres.pkiDir, 'usercert.pem'),
        keyPath: join(ceres.pkiDir, 'userkey.pem'),
      },
    ],
  });
  const page = await ctx.newPage();
  const shots = [
    ['overview', '/', 1280],
    ['jobs', '/web/jobs', 1280],
    ['job', `/web/jobs/${done.id}`, 1280],
    ['jobs-phone', '/web/jobs', 390],
    ['job-phone', `/web/jobs/${done.id}`, 390],
  ];
  for (const [name, path, width] of shots) {
    await page.setViewportSize({ width, height: width > 500 ? 800 : 844 });
    await page.goto(`${ceres.url}${path}`);
    await page.screenshot({ path: join(out, `web-${name}.png`) });
  }
} finally {
  await browser.close();
  await stopCeres(ceres);
  removeDir(ceres.stateDir);
}
