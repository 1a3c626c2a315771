import { chromium, type Browser } from 'playwright-core'

/** Debian's Chromium: CHROMIUM_PATH when set, else `/usr/bin/chromium` (`.ci/run` installs it). */
export const chromiumPath = (): string => process.env.CHROMIUM_PATH ?? '/usr/bin/chromium'

/**
 * A headless Chromium driven by playwright-core (no browser download: the system's binary), in the
 * time zone `timezoneId` is for pages opened with `newPage` of a context. The sandbox is off because
 * CI runs as root, where Chromium refuses to start with it; the pages it opens are the console's own.
 */
export async function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: chromiumPath(),
    headless: true,
    args: ['--no-sandbox', '--disable-dev-shm-usage'],
  })
}
