/**
 * The real service with a headless Chromium signed in as the development user (its
 * certificate), for a web test file: started once in `before`, ended by `stop` in `after`.
 */
import type { Browser, BrowserContext } from 'playwright-core';
import { certificateContext, launchChromium } from './chromium.js';
import { Client, removeDir, startCeres, stopCeres, type RunningCeres } from './service.js';

export interface BrowserService {
  readonly ceres: RunningCeres;
  readonly client: Client;
  readonly browser: Browser;
  /** Pages of the development user. */
  readonly user: BrowserContext;
  stop(): Promise<void>;
}

export async function startBrowserService(): Promise<BrowserService> {
  const ceres = await startCeres();
  const client = Client.forUser(ceres);
  const browser = await launchChromium();
  const user = await certificateContext(browser, new URL(ceres.url).origin, ceres.pkiDir, {
    cert: 'usercert.pem',
    key: 'userkey.pem',
  });
  return {
    ceres,
    client,
    browser,
    user,
    stop: async () => {
      await user.close();
      await browser.close();
      await client.close();
      await stopCeres(ceres);
      removeDir(ceres.stateDir);
    },
  };
}
