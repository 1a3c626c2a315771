import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Browser, Page } from 'playwright-core'
import { orderBody, setStock } from '../src/api.js'
import { launchBrowser } from '../src/browser.js'
import type { PlacedOrder } from '../src/ledger.js'
import { useScenario } from '../src/scenario.js'
import { screenshot } from './scenarios/console.js'

/**
 * The road ahead of a running order in the saga console, in a real browser against a real fleet:
 * shipment is stopped, an order is placed, and its page draws the steps the saga map says come
 * next after the last fact, the one waited for (shipment's) with why: shipment down since when, its
 * queue as last read, the StockReserved not known to be consumed, the deadline left. Once shipment is
 * back and the order confirmed, nothing is ahead.
 */
describe('the saga console: the road ahead of a running order', () => {
  const s = useScenario('console road ahead (shipment stopped)')
  let browser: Browser
  let page: Page
  let consoleUrl: string
  let order: PlacedOrder

  beforeAll(async () => {
    consoleUrl = (await s.fleet.startConsole()).url
    browser = await launchBrowser()
    page = await browser.newPage({ viewport: { width: 1360, height: 900 } })
    await setStock(s.fleet.one('inventory').url, 'E2E-AHEAD', 10)
    s.ledger.stock.set('E2E-AHEAD', 10)
  }, 120_000)

  afterAll(async () => {
    await browser?.close()
  })

  const step = (service: string, waiting: boolean) =>
    page.locator(`[data-testid="pending-step"][data-service="${service}"][data-waiting="${waiting}"]`)

  it('when shipment is stopped and an order placed, then its page shows the shipment step waited for, because shipment is down', async () => {
    // The fleet page first, so the console reads shipment's queues while it is up; then it sees it down.
    await page.goto(consoleUrl)
    await page.locator('[data-testid="service-row"][data-service="shipment"][data-health="up"]').waitFor()
    await s.fleet.one('shipment').stop()
    await page
      .locator('[data-testid="service-row"][data-service="shipment"][data-health="down"]')
      .waitFor({ timeout: 20_000 })

    order = await s.place(orderBody([{ sku: 'E2E-AHEAD', quantity: 1 }]))
    await page.goto(`${consoleUrl}/orders/${order.id}`)
    const shipment = step('shipment', true)
    // Reserved stock is the last fact the fleet can reach; the page reloads a PENDING order by itself.
    await shipment.waitFor({ timeout: 30_000 })
    expect(await shipment.getAttribute('data-reacts-to')).toBe('stock.reserved')
    expect(await shipment.locator('.name').innerText()).toBe('ShipmentCreated or ShipmentFailed')
    const reason = (kind: string) => shipment.locator(`[data-testid="pending-reason"][data-kind="${kind}"]`)
    expect(await reason('service').innerText()).toMatch(
      /^shipment down since \d\d:\d\d:\d\d \(.+\): not live/,
    )
    // The poll that first saw shipment down (not live once its shutdown began) may still have read
    // its summary: those figures read as live until a poll finds it gone and marks them as of then.
    await expect
      .poll(() => reason('queue').innerText(), { timeout: 20_000 })
      .toMatch(/^its queue: \d+ ready, \d+ consumers \(as of \d\d:\d\d:\d\d\)$/)
    // Likewise its inbox, read by the join while shipment was shutting down, then not at all.
    await expect
      .poll(() => reason('not-consumed').innerText(), { timeout: 20_000 })
      .toMatch(/^StockReserved published .+; consumed\? unknown, shipment could not be read$/)
    expect(await reason('deadline').innerText()).toMatch(/^deadline in \d/)
    // After it, the confirmation, waiting for nothing yet; the facts so far are the graph's nodes.
    await step('order', false).waitFor()
    expect(await page.getByTestId('pending-step').count()).toBe(2)
    const types = await Promise.all(
      (await page.getByTestId('graph-node').all()).map((n) => n.getAttribute('data-type')),
    )
    expect(types.sort()).toEqual(['order.created', 'payment.processed', 'stock.reserved'])
    await screenshot(page, 'order-road-ahead')
  })

  it('when shipment is back and the order confirmed, then nothing is ahead and every invariant holds', async () => {
    await s.fleet.one('shipment').restart()
    await s.awaitTerminal([order], 60_000)
    await page.reload()
    await expect
      .poll(() => page.getByTestId('order-status').innerText(), { timeout: 20_000 })
      .toBe('CONFIRMED')
    await page.locator('[data-testid="graph-node"][data-type="order.confirmed"]').waitFor({ timeout: 20_000 })
    expect(await page.getByTestId('pending-step').count()).toBe(0)
    const report = await s.invariants()
    expect(report.violations).toEqual([])
  })
})
