import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Browser, Page } from 'playwright-core'
import { getOrder, orderBody, placeOrder, setStock } from '../src/api.js'
import { launchBrowser } from '../src/browser.js'
import { Fleet } from '../src/fleet.js'
import { OtlpReceiver } from '../src/otlp-receiver.js'
import { SERVICES, type ServiceName } from '../src/run.js'
import { eventually } from '../src/wait.js'

// The console's search in Debian's Chromium against the fleet as processes, with tracing on (so the
// outbox rows carry trace ids): each kind of id lands on its order, and the orders list's URL
// reproduces what it shows, page position included.
const receiver = await OtlpReceiver.start()
const tracing = {
  NODE_OPTIONS: '--import @saga/service-kit/telemetry',
  OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint,
  OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
}
const SKU = 'E2E-SEARCH'

let fleet: Fleet
let browser: Browser
let consoleUrl: string

/** Places an order of one SKU line for `customerId` (with `key` as its Idempotency-Key) and waits until it ended. */
async function placed(customerId: string, key: string = randomUUID()): Promise<string> {
  const body = { ...orderBody([{ sku: SKU, quantity: 1 }]), customerId }
  const { order } = await placeOrder(fleet.one('order').url, body, { 'idempotency-key': key })
  await eventually(`order ${order.id} ended`, async () => {
    const { status } = await getOrder(fleet.one('order').url, order.id)
    return status !== 'PENDING'
  })
  return order.id
}

/** The outbox rows `service` keeps for an order, as its admin surface answers them. */
async function outboxOf(service: ServiceName, orderId: string) {
  const res = await fetch(`${fleet.one(service).url}/admin/messaging/records?aggregateId=${orderId}`)
  expect(res.status).toBe(200)
  return ((await res.json()) as { outbox: { id: string; traceId: string | null; routingKey: string }[] })
    .outbox
}

/** The ids the list shows, top to bottom, once it shows `count` rows. */
async function listed(page: Page, count: number): Promise<string[]> {
  const rows = page.locator('[data-testid="orders-list"] [data-testid="order-row"]')
  await expect.poll(() => rows.count(), { timeout: 20_000 }).toBe(count)
  const ids: string[] = []
  for (let i = 0; i < count; i++) ids.push((await rows.nth(i).getAttribute('data-order-id')) ?? '')
  return ids
}

beforeAll(async () => {
  fleet = await Fleet.start({
    env: Object.fromEntries(SERVICES.map((s) => [s, tracing])),
  })
  await setStock(fleet.one('inventory').url, SKU, 100)
  consoleUrl = (await fleet.startConsole()).url
  browser = await launchBrowser()
}, 180_000)

afterAll(async () => {
  await browser?.close()
  await fleet?.stop()
  await receiver.stop()
})

describe('search by any id in a browser', () => {
  it('when an order id, its start, a customer id, a message id, a trace id or an idempotency key is searched, then the order opens', async () => {
    const customerId = randomUUID()
    const key = `e2e-search-${randomUUID()}`
    const orderId = await placed(customerId, key)
    await placed(randomUUID())
    // A fact of each service but order: PaymentProcessed (payment's outbox, inventory's inbox) and StockReserved.
    const payment = await outboxOf('payment', orderId)
    const inventory = await outboxOf('inventory', orderId)
    const traceId = payment.find((row) => row.traceId !== null)?.traceId
    expect(traceId, 'the payment row carries a trace id').toMatch(/^[0-9a-f]{32}$/)

    const page = await browser.newPage({ viewport: { width: 1360, height: 900 } })
    try {
      const searches: Array<[string, string]> = [
        ['order id', orderId],
        ['order id start', orderId.slice(0, 8)],
        ['customer id', customerId],
        ["payment's message id", payment[0]!.id],
        ["inventory's message id", inventory[0]!.id],
        ['trace id', traceId!],
        ['idempotency key', key],
      ]
      for (const [kind, text] of searches) {
        await page.goto(`${consoleUrl}/orders`)
        await page.getByTestId('search-input').fill(text)
        await page.getByTestId('search-submit').click()
        await page.waitForURL(`${consoleUrl}/orders/${orderId}`, { timeout: 20_000 })
        await expect
          .poll(() => page.getByTestId('order-status').innerText(), { timeout: 20_000, message: kind })
          .toMatch(/CONFIRMED|CANCELLED/)
      }

      // A text that is no id of any order says so, and stays on the list.
      await page.goto(`${consoleUrl}/orders`)
      await page.getByTestId('search-input').fill(randomUUID())
      await page.getByTestId('search-submit').click()
      await expect.poll(() => page.getByTestId('search-result').innerText()).toContain('No order has the id')
    } finally {
      await page.close()
    }
  })

  it("when a customer's orders are searched and paged, then the URL reproduces the list and the page in a fresh browser", async () => {
    const customerId = randomUUID()
    const ids = [await placed(customerId), await placed(customerId), await placed(customerId)]
    const page = await browser.newPage({ viewport: { width: 1360, height: 900 } })
    try {
      await page.goto(`${consoleUrl}/orders`)
      await page.getByTestId('search-input').fill(customerId.toUpperCase())
      await page.getByTestId('search-submit').click()
      await page.waitForURL(`${consoleUrl}/orders?customerId=${customerId}`, { timeout: 20_000 })
      expect(await listed(page, 3)).toEqual([...ids].reverse())

      // One a page, then the next page: the URL carries the filter, the page size and the position.
      await page.goto(`${consoleUrl}/orders?customerId=${customerId}&limit=1`)
      expect(await listed(page, 1)).toEqual([ids[2]])
      await page.getByTestId('orders-next').click()
      await page.waitForURL(/cursor=/)
      await expect.poll(() => listed(page, 1)).toEqual([ids[1]])
      const link = page.url()

      const fresh = await browser.newContext({ viewport: { width: 1360, height: 900 } })
      try {
        const other = await fresh.newPage()
        await other.goto(link)
        expect(await listed(other, 1)).toEqual([ids[1]])
        expect(await other.getByTestId('filter-customerId').inputValue()).toBe(customerId)
        await other.getByTestId('orders-next').click()
        await expect.poll(() => listed(other, 1)).toEqual([ids[0]])
        expect(await other.getByTestId('orders-next').isDisabled()).toBe(true)
      } finally {
        await fresh.close()
      }
    } finally {
      await page.close()
    }
  })
})
