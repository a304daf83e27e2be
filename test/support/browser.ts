/**
 * The test browser, found in this order:
 * 1. `CHROMIUM`: any Chrome, Chromium or Edge binary (`CHROMIUM=/usr/bin/chromium npm test`);
 * 2. on Linux x64, `@sparticuz/chromium` from the npm registry, which ships the binary inside its tarball (unpacked to
 *    the temp folder on first use), so `npm ci` is all a fresh Linux machine needs;
 * 3. a Chrome, Chromium or Edge installed at the usual place of the platform (below).
 * With none, the browser tests fail with a message that says what to install. Puppeteer drives it over the DevTools
 * protocol.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import puppeteer, { type Browser, type Page } from 'puppeteer-core';
import { inject } from 'vitest';

/** Where each platform's installers put Chrome, Chromium and Edge. */
export const SYSTEM_BROWSERS: Record<string, string[]> = {
  darwin: [
    '/Applications/Google Chrome.app/Contents/MacOS/Google Chrome',
    '/Applications/Chromium.app/Contents/MacOS/Chromium',
    '/Applications/Microsoft Edge.app/Contents/MacOS/Microsoft Edge',
    '/Applications/Google Chrome Canary.app/Contents/MacOS/Google Chrome Canary',
  ],
  linux: [
    '/usr/bin/chromium',
    '/usr/bin/chromium-browser',
    '/usr/bin/google-chrome',
    '/usr/bin/google-chrome-stable',
    '/usr/bin/microsoft-edge',
    '/snap/bin/chromium',
  ],
  win32: [
    join(process.env['PROGRAMFILES'] ?? 'C:\\Program Files', 'Google', 'Chrome', 'Application', 'chrome.exe'),
    join(
      process.env['PROGRAMFILES(X86)'] ?? 'C:\\Program Files (x86)',
      'Microsoft',
      'Edge',
      'Application',
      'msedge.exe',
    ),
  ],
};

const INSTALL: Record<string, string> = {
  darwin: 'install Google Chrome (or `brew install --cask chromium`)',
  linux: 'install Chromium (`apt-get install chromium` on Debian/Ubuntu)',
  win32: 'install Google Chrome or Microsoft Edge',
};

/**
 * The browser's path, or the reason there is none (`{ missing }`): the global setup calls this once, before any file
 * starts, so browser tests never race to unpack the packaged one, and only they fail when there is none.
 */
export async function chromiumPath(
  platform = process.platform,
  arch = process.arch,
  exists: (path: string) => boolean = existsSync,
): Promise<{ path: string } | { missing: string }> {
  const override = process.env['CHROMIUM'];
  if (override) return { path: override };
  if (platform === 'linux' && arch === 'x64') {
    const { default: chromium } = await import('@sparticuz/chromium');
    return { path: await chromium.executablePath() };
  }
  const found = (SYSTEM_BROWSERS[platform] ?? []).find((path) => exists(path));
  if (found) return { path: found };
  return {
    missing:
      `no browser for the browser tests on ${platform}-${arch}: the npm-shipped Chromium runs on Linux x64 only, and ` +
      `none was found at ${(SYSTEM_BROWSERS[platform] ?? []).join(', ') || 'the usual places'}. ` +
      `${INSTALL[platform] ?? 'install Chrome or Chromium'}, or set CHROMIUM to a Chrome, Chromium or Edge binary.`,
  };
}

export async function launchBrowser(): Promise<Browser> {
  const browser = inject('chromium');
  if ('missing' in browser) throw new Error(browser.missing);
  return puppeteer.launch({
    executablePath: browser.path,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--no-zygote', '--single-process'],
  });
}

/**
 * A browser with the console open at `url`/ops in a window of the given size, signed in as `user` and live (its
 * WebSocket connected). Every error the page throws or logs goes into `pageErrors`.
 */
export async function signedInConsole(
  url: string,
  user: { email: string; password: string },
  viewport: { width: number; height: number },
  pageErrors: string[] = [],
): Promise<{ browser: Browser; page: Page }> {
  const browser = await launchBrowser();
  const page = await browser.newPage();
  page.on('pageerror', (error) => pageErrors.push(String(error)));
  page.on('console', (message) => {
    if (message.type() === 'error') pageErrors.push(message.text());
  });
  await page.setViewport(viewport);
  await page.goto(`${url}/ops`, { waitUntil: 'networkidle0', timeout: 60_000 });
  await page.type('#email', user.email);
  await page.type('#password', user.password);
  await page.click('#signin button[type=submit]');
  await page.waitForFunction(`document.getElementById('status').textContent.includes('live')`, { timeout: 60_000 });
  return { browser, page };
}
