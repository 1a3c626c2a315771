import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core'

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

/**
 * A page in a browser context of its own (1360 x 900, UTC), at `url`'s `/repair`, signed in through
 * the header's form as `actor` with `token`; resolves once the header names the actor.
 */
export async function signedInAtRepair(
  browser: Browser,
  url: string,
  actor: string,
  token: string,
): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext({ viewport: { width: 1360, height: 900 }, timezoneId: 'UTC' })
  const page = await context.newPage()
  await page.goto(`${url}/repair`)
  await page.getByTestId('sign-in-actor').fill(actor)
  await page.getByTestId('sign-in-token').fill(token)
  await page.getByTestId('sign-in-submit').click()
  await page.getByTestId('session-actor').waitFor()
  return { context, page }
}
