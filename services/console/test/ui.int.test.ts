import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildApp } from '../src/app.js'
import { loadConfig } from '../src/config.js'
import { startConsole, type RunningConsole } from './support/console.js'
import { startStubFleet, type StubFleet } from './support/stubs.js'

// The built UI (dist/ui): turbo runs the workspace's build before its tests.
let fleet: StubFleet
let console_: RunningConsole

beforeAll(async () => {
  fleet = await startStubFleet()
  console_ = await startConsole(fleet.env)
})

afterAll(async () => {
  await console_.close()
  await fleet.close()
})

describe('the built UI', () => {
  it('when / is opened, then the page and its bundled script and styles load from the console itself', async () => {
    const page = await fetch(`${console_.url}/`)
    expect(page.status).toBe(200)
    expect(page.headers.get('content-type')).toMatch(/^text\/html/)
    expect(page.headers.get('content-security-policy')).toContain("script-src 'self'")
    expect(page.headers.get('x-frame-options')).toBe('DENY')
    const html = await page.text()
    expect(html).toContain('<div id="root">')
    const script = /<script[^>]+src="(\/assets\/[^"]+\.js)"/.exec(html)?.[1]
    const style = /<link[^>]+href="(\/assets\/[^"]+\.css)"/.exec(html)?.[1]
    expect(script).toBeDefined()
    expect(style).toBeDefined()
    // Nothing from another host: no CDN.
    expect(html).not.toMatch(/(src|href)="(https?:)?\/\//)
    const asset = await fetch(`${console_.url}${script}`)
    expect(asset.status).toBe(200)
    expect(asset.headers.get('content-type')).toMatch(/javascript/)
    expect(asset.headers.get('cache-control')).toContain('immutable')
    expect((await asset.text()).length).toBeGreaterThan(10_000)
    expect((await fetch(`${console_.url}${style}`)).status).toBe(200)
  })

  it('when a page of the app is opened directly, then index.html answers it', async () => {
    for (const path of ['/orders', `/orders/${randomUUID()}`]) {
      const response = await fetch(`${console_.url}${path}`)
      expect(response.status).toBe(200)
      expect(await response.text()).toContain('<div id="root">')
    }
  })

  it('when a path is neither a page, a file nor an API route, then 404 in the error shape', async () => {
    for (const path of ['/api/nothing', '/assets/missing.js']) {
      const response = await fetch(`${console_.url}${path}`)
      expect(response.status).toBe(404)
      expect(((await response.json()) as { error: string }).error).toBe('Not Found')
    }
  })

  it('when the probes are asked, then the console is live and ready whatever the services do', async () => {
    await fleet.stubs.order.close()
    expect((await fetch(`${console_.url}/health/live`)).status).toBe(200)
    expect((await fetch(`${console_.url}/health/ready`)).status).toBe(200)
  })

  it('when the UI is not built, then its pages answer 503 naming the fix', async () => {
    const app = await buildApp(loadConfig({ LOG_LEVEL: 'silent' }), {
      logger: false,
      uiDir: `/tmp/no-ui-${randomUUID()}/`,
    })
    try {
      const response = await app.inject('/orders')
      expect(response.statusCode).toBe(503)
      expect(response.json<{ message: string }>().message).toBe(
        'The console UI is not built; run npm run build',
      )
    } finally {
      await app.close()
    }
  })
})
