import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Browser, BrowserContext, Page } from 'playwright-core'
import { launchBrowser } from './support/browser.js'
import { startConsole, type RunningConsole } from './support/console.js'
import { orderFixture, startStubFleet, type OrderFixture, type StubFleet } from './support/stubs.js'

// The built UI (dist/ui) in Debian's Chromium, against the stub fleet: what a person sees.
let fleet: StubFleet
let console_: RunningConsole
let browser: Browser
const fixture: OrderFixture = orderFixture()
const TRACE_TEMPLATE = 'http://traces.invalid/trace/{traceId}'

/** A page in a browser context of its own (its own storage), in `timezoneId`. */
async function openPage(timezoneId: string): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext({ viewport: { width: 1360, height: 900 }, timezoneId })
  return { context, page: await context.newPage() }
}

beforeAll(async () => {
  fleet = await startStubFleet([fixture])
  console_ = await startConsole({ ...fleet.env, TRACE_URL_TEMPLATE: TRACE_TEMPLATE })
  browser = await launchBrowser()
})

afterAll(async () => {
  await browser?.close()
  await console_?.close()
  await fleet?.close()
})

describe('the order page in a browser', () => {
  it('when a consumer recorded a fact before its row was marked published, then its offset is from the commit, never negative', async () => {
    const { context, page } = await openPage('UTC')
    try {
      await page.goto(`${console_.url}/orders/${fixture.orderId}`)
      const created = page.locator(`[data-testid="hop-row"][data-message-id="${fixture.ids.created}"]`)
      const consumer = created.locator('[data-testid="hop-consumer"][data-consumed="true"]')
      // Committed 12:00:00, consumed 12:00:01, marked published 12:00:01.5 (stubs.ts).
      await expect.poll(() => consumer.innerText()).toContain('+1.0 s')
      expect(await page.getByTestId('hops').innerText()).not.toContain('+-')
    } finally {
      await context.close()
    }
  })

  it('when a service\'s inbox cannot be read, then its handlers\' hops say unknown, not "not consumed"', async () => {
    const { context, page } = await openPage('UTC')
    const inbox = fleet.stubs.payment.behaviour.answers
    inbox.set('/admin/messaging/inbox', { status: 503, body: { error: { code: 'unavailable' } } })
    try {
      await page.goto(`${console_.url}/orders/${fixture.orderId}`)
      const created = page.locator(`[data-testid="hop-row"][data-message-id="${fixture.ids.created}"]`)
      const payment = created.locator(
        '[data-testid="hop-consumer"][data-handler="process-payment-when-order-created"]',
      )
      await expect.poll(() => payment.innerText()).toContain('unknown: payment could not be read')
      expect(await payment.getAttribute('data-consumed')).toBe('false')
      await expect.poll(() => page.getByTestId('source-warning').count()).toBe(1)
    } finally {
      inbox.delete('/admin/messaging/inbox')
      await context.close()
    }
  })

  it('when times are shown, then one format in the local zone named, and the toggle switches every one to UTC', async () => {
    const { context, page } = await openPage('America/New_York')
    try {
      await page.goto(`${console_.url}/orders/${fixture.orderId}`)
      const deadline = page.getByTestId('order-deadline')
      const committed = page.locator(
        `[data-testid="hop-row"][data-message-id="${fixture.ids.created}"] [data-testid="hop-committed"]`,
      )
      // The fixture's order: placed 2026-12-01 12:00:00 UTC, deadline ten minutes later.
      await expect.poll(() => deadline.innerText()).toBe('2026-12-01 07:10:00 EST')
      expect(await committed.innerText()).toBe('07:00:00.000')
      expect(await page.getByTestId('zone-toggle').innerText()).toContain('America/New_York')
      const recorded = page.getByTestId('recorded-actions')
      expect(await recorded.innerText()).toMatch(/2026-12-01 07:00:1\d EST/)
      // No second format anywhere (a browser's toLocaleString would say `12/1/2026, 7:10:00 AM`).
      expect(await page.locator('main').innerText()).not.toMatch(/\d\/\d+\/\d{4}|\b[AP]M\b/)

      await page.getByTestId('zone-toggle').click()
      await expect.poll(() => deadline.innerText()).toBe('2026-12-01 12:10:00 UTC')
      expect(await committed.innerText()).toBe('12:00:00.000')
      expect(await page.getByTestId('zone-toggle').getAttribute('data-zone')).toBe('utc')

      // The choice is the browser's: a reload keeps it.
      await page.reload()
      await expect.poll(() => deadline.innerText()).toBe('2026-12-01 12:10:00 UTC')
    } finally {
      await context.close()
    }
  })
})

describe("a fact's payload in a browser", () => {
  it('when a node of the graph is clicked, then its payload, stored headers, CloudEvents attributes and trace link open', async () => {
    const { context, page } = await openPage('UTC')
    try {
      await page.goto(`${console_.url}/orders/${fixture.orderId}`)
      const node = page.locator(`[data-testid="graph-node"][data-message-id="${fixture.ids.processed}"]`)
      await node.click()
      const panel = page.locator(`[data-testid="fact-detail"][data-message-id="${fixture.ids.processed}"]`)
      await panel.waitFor()
      expect(await node.getAttribute('data-selected')).toBe('true')
      const attribute = async (name: string) =>
        (await panel.locator(`[data-testid="fact-attribute"][data-name="${name}"] td`).innerText()).trim()
      expect(await attribute('id')).toBe(fixture.ids.processed)
      expect(await attribute('source')).toBe('payment')
      expect(await attribute('type')).toBe('payment.processed.v1')
      expect(await attribute('subject')).toBe(fixture.orderId)
      expect(await attribute('causationid')).toBe(fixture.ids.created)
      const traceId = fixture.orderId.replaceAll('-', '')
      expect(await attribute('traceparent')).toBe(`00-${traceId}-00f067aa0ba902b7-01`)
      const header = panel.locator('[data-testid="fact-header"][data-name="correlationId"] td')
      expect((await header.innerText()).trim()).toBe(fixture.orderId)
      expect(JSON.parse(await panel.getByTestId('fact-payload').innerText())).toEqual({
        orderId: fixture.orderId,
      })
      expect(await panel.getByTestId('fact-trace').getAttribute('href')).toBe(
        TRACE_TEMPLATE.replace('{traceId}', traceId),
      )

      await panel.getByTestId('fact-close').click()
      await panel.waitFor({ state: 'detached' })
    } finally {
      await context.close()
    }
  })

  it('when a fact is known only from a dead letter, then its payload opens and no attribute is made up', async () => {
    const { context, page } = await openPage('UTC')
    try {
      await page.goto(`${console_.url}/orders/${fixture.orderId}`)
      await page.locator(`[data-testid="graph-node"][data-message-id="${fixture.deadLetterId}"]`).click()
      const panel = page.locator(`[data-testid="fact-detail"][data-message-id="${fixture.deadLetterId}"]`)
      await panel.waitFor()
      expect(await panel.getByTestId('fact-payload').innerText()).toBe('{}')
      expect(await panel.getByTestId('fact-attributes').count()).toBe(0)
      expect(await panel.getByTestId('fact-trace').count()).toBe(0)
    } finally {
      await context.close()
    }
  })
})

describe('the fleet charts in a browser', () => {
  it("when a point is hovered, then the legend shows its time and values; when not, the latest point's", async () => {
    // Three buckets of the last 30 s: 1, 3 and 5 confirmed per second.
    const last = Math.floor(Date.now() / 10_000) * 10_000
    const bucket = (ms: number, confirmed: number) => ({
      at: new Date(ms).toISOString(),
      confirmed,
      cancelled: 0,
      latencyP50Ms: 100,
      latencyP99Ms: 200,
    })
    fleet.stubs.order.behaviour.answers.set('/orders/stats', {
      status: 200,
      body: {
        at: new Date(last + 5_000).toISOString(),
        byStatus: { PENDING: 0, CONFIRMED: 90, CANCELLED: 0 },
        pendingByStep: { payment: 0, inventory: 0, shipment: 0 },
        pendingOverdue: 0,
        buckets: [bucket(last - 20_000, 10), bucket(last - 10_000, 30), bucket(last, 50)],
      },
    })
    const { context, page } = await openPage('UTC')
    try {
      await page.goto(console_.url)
      const chart = page.locator('[data-testid="chart-completed"][data-points="3"]')
      await chart.waitFor()
      const legend = page.locator('[data-testid="chart-completed"] + [data-testid="chart-legend"]')
      const confirmed = legend.locator('[data-testid="legend-value"][data-label="confirmed/s"] strong')
      const hhmmss = (ms: number) => new Date(ms).toISOString().slice(11, 19)

      expect(await legend.getAttribute('data-hovered')).toBe('false')
      expect(await legend.getByTestId('legend-time').innerText()).toBe(`latest ${hhmmss(last)}`)
      expect(await confirmed.innerText()).toBe('5')

      // The x axis spans the 300 s up to the stats' time: the first bucket is 25 s before its end.
      const over = (await chart.locator('.u-over').boundingBox())!
      await page.mouse.move(over.x + (over.width * (300 - 25)) / 300, over.y + over.height / 2)
      await page
        .locator('[data-testid="chart-completed"] + [data-testid="chart-legend"][data-hovered="true"]')
        .waitFor()
      expect(await legend.getByTestId('legend-time').innerText()).toBe(hhmmss(last - 20_000))
      expect(await confirmed.innerText()).toBe('1')
      expect(await legend.innerText()).not.toContain('--')

      await page.mouse.move(0, 0)
      await page
        .locator('[data-testid="chart-completed"] + [data-testid="chart-legend"][data-hovered="false"]')
        .waitFor()
      expect(await confirmed.innerText()).toBe('5')
    } finally {
      await context.close()
      fleet.stubs.order.behaviour.answers.delete('/orders/stats')
    }
  })
})
