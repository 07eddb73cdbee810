/**
 * Headless Chromium for the browser tests (playwright-core driving Debian's chromium): where
 * it is, the skip reason where it is not (a failure with CERES_REQUIRE_BROWSER=1), and a
 * browser context presenting a dev-PKI client certificate to one origin.
 */
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import assert from 'node:assert/strict';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';

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
