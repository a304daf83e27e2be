/**
 * The test browser. Chromium comes from the npm registry: `@sparticuz/chromium` ships the binary inside its own
 * tarball (brotli-compressed, unpacked to the temp folder on first use), so `npm ci` is all a fresh machine needs.
 * `CHROMIUM` names a system browser instead (`CHROMIUM=/usr/bin/chromium npm test`). Puppeteer drives it over the
 * DevTools protocol.
 */
import puppeteer, { type Browser } from 'puppeteer-core';
import { inject } from 'vitest';

/** Unpacks the packaged browser (once per run: the global setup calls this before any test file starts). */
export async function chromiumPath(): Promise<string> {
  const override = process.env['CHROMIUM'];
  if (override) return override;
  const { default: chromium } = await import('@sparticuz/chromium');
  return chromium.executablePath();
}

export async function launchBrowser(): Promise<Browser> {
  return puppeteer.launch({
    executablePath: inject('chromium'),
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--no-zygote', '--single-process'],
  });
}
