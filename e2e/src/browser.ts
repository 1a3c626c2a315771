import { execFileSync } from 'node:child_process'
import { chromium, type Browser } from 'playwright-core'

/**
 * Where Debian's Chromium is: CHROMIUM_PATH when set, else `chromium` (or `chromium-browser`) on
 * PATH. `.ci/run` installs Debian's `chromium` package.
 * @throws Error naming the package to install when there is none
 */
export function chromiumPath(): string {
  if (process.env.CHROMIUM_PATH) return process.env.CHROMIUM_PATH
  for (const name of ['chromium', 'chromium-browser']) {
    try {
      return execFileSync('sh', ['-c', `command -v ${name}`], { encoding: 'utf8' }).trim()
    } catch {
      // not this name
    }
  }
  throw new Error("no Chromium: install Debian's chromium (apt-get install chromium) or set CHROMIUM_PATH")
}

/**
 * A headless Chromium driven by playwright-core (no browser download: the system's binary). The
 * sandbox is off because CI runs as root, where Chromium refuses to start with it; the pages it
 * opens are the console's own.
 */
export async function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: chromiumPath(),
    headless: true,
    args: ['--no-sandbox', '--disable-dev-shm-usage'],
  })
}
