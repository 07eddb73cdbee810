/**
 * Headless Chromium for the browser tests (playwright-core driving Debian's chromium): where
 * it is, the skip reason where it is not (a failure with CERES_REQUIRE_BROWSER=1), and a
 * browser context presenting a dev-PKI client certificate to one origin.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import { join } from 'node:path';
import assert from 'node:assert/strict';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { Client, removeDir, startCeres, stopCeres, type RunningCeres } from './service.js';

function findChromium(): string | undefined {
  for (const name of ['chromium', 'chromium-browser']) {
    try {
      return execFileSync('sh', ['-c', `command -v ${name}`], { encoding: 'utf8' }).trim() || undefined;
    } catch {
      /* next */
    }
  }
  return undefined;
}

const executable = findChromium();
if (executable === undefined && process.env.CERES_REQUIRE_BROWSER === '1')
  throw new Error('CERES_REQUIRE_BROWSER=1 but no chromium on PATH');

/** The `skip` option of a browser test's describe. */
export const chromiumSkip: string | false =
  executable === undefined
    ? 'no chromium on PATH (install Debian chromium; CERES_REQUIRE_BROWSER=1 makes this a failure)'
    : false;

/** Starts headless Chromium (only under a describe that `chromiumSkip` did not skip). */
export function launchChromium(): Promise<Browser> {
  if (executable === undefined) throw new Error('no chromium on PATH');
  // Root (CI, this test machine) cannot use Chromium's sandbox.
  return chromium.launch({ executablePath: executable, args: ['--no-sandbox'] });
}

/** A context presenting `cert`/`key` of `pkiDir` to `origin` (the dev PKI's certificates are self-signed). */
export function certificateContext(
  browser: Browser,
  origin: string,
  pkiDir: string,
  files: { cert: string; key: string },
  javaScriptEnabled = true,
): Promise<BrowserContext> {
  return browser.newContext({
    ignoreHTTPSErrors: true,
    javaScriptEnabled,
    clientCertificates: [{ origin, certPath: join(pkiDir, files.cert), keyPath: join(pkiDir, files.key) }],
  });
}

/** The page fits its viewport's width: nothing pushes it sideways (a phone's screen). */
export async function fitsWidth(p: Page): Promise<void> {
  const overflow = await p.evaluate<number>(
    'document.documentElement.scrollWidth - document.documentElement.clientWidth',
  );
  assert.ok(overflow <= 0, `horizontal overflow of ${overflow}px at ${p.url()}`);
}

/**
 * Another https origin (another port, the dev PKI's host certificate) serving the page
 * `html` makes of each request's address: a hostile site whose page posts to the service.
 */
export async function attackerSite(
  pkiDir: string,
  html: (url: URL) => string,
): Promise<{ readonly server: Server; readonly url: string }> {
  const cert = readFileSync(join(pkiDir, 'hostcert.pem'));
  const key = readFileSync(join(pkiDir, 'hostkey.pem'));
  const server = createServer({ cert, key }, (req, res) => {
    res.setHeader('content-type', 'text/html');
    res.end(html(new URL(req.url ?? '/', 'https://x')));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { server, url: `https://localhost:${(server.address() as { port: number }).port}/` };
}

/** A service, a REST client and a browser context of the development user, for one test file. */
export interface BrowserService {
  readonly ceres: RunningCeres;
  readonly client: Client;
  readonly origin: string;
  readonly browser: Browser;
  readonly ctx: BrowserContext;
  /** A hostile https origin (attackerSite) serving `attackerPage`, when one was asked for. */
  readonly attackerUrl: string;
  close(): Promise<void>;
}

export async function startBrowserService(
  config: Record<string, unknown>,
  attackerPage: (url: URL) => string = () => '<!DOCTYPE html><p>elsewhere</p>',
): Promise<BrowserService> {
  const ceres = await startCeres({ config });
  const client = Client.forUser(ceres);
  const origin = new URL(ceres.url).origin;
  const browser = await launchChromium();
  const ctx = await certificateContext(browser, origin, ceres.pkiDir, { cert: 'usercert.pem', key: 'userkey.pem' });
  const attacker = await attackerSite(ceres.pkiDir, attackerPage);
  return {
    ceres,
    client,
    origin,
    browser,
    ctx,
    attackerUrl: attacker.url,
    close: async () => {
      await ctx.close();
      await browser.close();
      attacker.server.close();
      await client.close();
      await stopCeres(ceres);
      removeDir(ceres.stateDir);
    },
  };
}

/**
 * Contexts of the dev PKI's user and of its `siteadmin` (made with addDevUser), whose pages
 * record every dialog (an alert a name with markup would raise) into `dialogs`.
 */
export async function userAndAdmin(
  browser: Browser,
  origin: string,
  pkiDir: string,
  dialogs: string[],
): Promise<{ user: BrowserContext; admin: BrowserContext }> {
  const user = await certificateContext(browser, origin, pkiDir, { cert: 'usercert.pem', key: 'userkey.pem' });
  const admin = await certificateContext(browser, origin, pkiDir, {
    cert: 'siteadmin-cert.pem',
    key: 'siteadmin-key.pem',
  });
  for (const c of [user, admin])
    c.on('page', (p) =>
      p.on('dialog', (d) => {
        dialogs.push(d.message());
        void d.dismiss();
      }),
    );
  return { user, admin };
}
