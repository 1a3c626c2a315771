import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Browser, Page } from 'playwright-core'
import { orderBody, setStock } from '../../src/api.js'
import { launchBrowser } from '../../src/browser.js'
import type { Scenario } from '../../src/scenario.js'
import { repoRoot } from '../../src/service-process.js'
import { eventually } from '../../src/wait.js'

/**
 * The README's pictures of the console, taken into E2E_SCREENSHOTS_DIR (from the repository root; `npm run
 * docs:screenshots` sets it to docs/console); a plain test run takes none, so it changes no file.
 */
export const screenshot = async (page: Page, name: string) => {
  const dir = process.env.E2E_SCREENSHOTS_DIR
  if (dir) await page.screenshot({ path: path.resolve(repoRoot, dir, `${name}.png`), fullPage: true })
}

/**
 * The saga console in a real browser (Debian's Chromium through playwright-core) against the
 * scenario's fleet: what a person sees live, an order's choreography with its compensation branch, a dead
 * letter requeued from the page, and a write refused without the credential.
 */
export function sagaConsole(s: Scenario): void {
  describe('the saga console in a browser', () => {
    let browser: Browser
    let page: Page
    let consoleUrl: string

    beforeAll(async () => {
      consoleUrl = (await s.fleet.startConsole()).url
      browser = await launchBrowser()
      page = await browser.newPage({ viewport: { width: 1360, height: 900 } })
      await setStock(s.fleet.one('inventory').url, 'E2E-CONSOLE', 50)
      s.ledger.stock.set('E2E-CONSOLE', 50)
    }, 120_000)

    afterAll(async () => {
      await browser?.close()
    })

    it('when an order is placed while the fleet page is open, then it appears in the recent orders without a reload', async () => {
      await page.goto(consoleUrl)
      await page.locator('[data-testid="live-status"][data-connected="true"]').waitFor({ timeout: 20_000 })
      // A mark on the page's global object survives only as long as the page is not reloaded.
      await page.evaluate(() => ((globalThis as Record<string, unknown>).sagaMark = 'kept'))
      const order = await s.place(orderBody([{ sku: 'E2E-CONSOLE', quantity: 1 }]))
      const row = page.locator(
        `[data-testid="recent-orders"] [data-testid="order-row"][data-order-id="${order.id}"]`,
      )
      await row.waitFor({ timeout: 20_000 })
      await s.awaitTerminal([order], 60_000)
      await page
        .locator(`[data-testid="recent-orders"] [data-order-id="${order.id}"][data-status="CONFIRMED"]`)
        .waitFor({ timeout: 20_000 })
      expect(await page.evaluate(() => (globalThis as Record<string, unknown>).sagaMark)).toBe('kept')
      expect(Number(await page.getByTestId('fleet-count-CONFIRMED').innerText())).toBeGreaterThanOrEqual(1)
      await expect.poll(() => page.locator('[data-testid="service-row"][data-health="up"]').count()).toBe(4)
      await screenshot(page, 'fleet')
    })

    it("when the carrier cannot serve the country, then the order's graph shows the failure and its compensations on their own branch", async () => {
      const order = await s.place(orderBody([{ sku: 'E2E-CONSOLE', quantity: 1 }], { country: 'AQ' }))
      await s.awaitTerminal([order], 60_000)
      await page.goto(`${consoleUrl}/orders/${order.id}`)
      await expect
        .poll(() => page.getByTestId('order-status').innerText(), { timeout: 20_000 })
        .toContain('CANCELLED')
      const node = (type: string) => page.locator(`[data-testid="graph-node"][data-type="${type}"]`)
      await node('payment.refunded').waitFor({ timeout: 20_000 })
      for (const forward of ['order.created', 'payment.processed', 'stock.reserved']) {
        expect(await node(forward).getAttribute('data-branch'), forward).toBe('forward')
      }
      for (const compensation of [
        'shipment.failed',
        'order.cancelled',
        'payment.refunded',
        'stock.released',
      ]) {
        expect(await node(compensation).getAttribute('data-branch'), compensation).toBe('compensation')
      }
      expect(await node('shipment.failed').getAttribute('data-kind')).toBe('failure')
      await screenshot(page, 'order')
    })

    it('when the console has not yet said whether writes are enabled, then the page shows neither read-only nor the sign-in form', async () => {
      let answer!: () => void
      const held = new Promise<void>((resolve) => (answer = resolve))
      await page.route('**/api/session', async (route) => {
        await held
        await route.continue()
      })
      try {
        await page.goto(`${consoleUrl}/orders`)
        await page.getByTestId('orders-list').waitFor()
        await page.getByTestId('session-pending').waitFor({ state: 'attached' })
        expect(await page.getByTestId('read-only').count()).toBe(0)
        expect(await page.getByTestId('sign-in-form').count()).toBe(0)
        answer()
        await page.getByTestId('sign-in-form').waitFor()
        expect(await page.getByTestId('session-pending').count()).toBe(0)
      } finally {
        answer()
        await page.unroute('**/api/session')
      }
    })

    it('when nobody signed in, then no action is offered and a write is refused by the console and by the service', async () => {
      await page.goto(`${consoleUrl}/orders`)
      await page.getByTestId('orders-list').waitFor()
      await page.getByTestId('sign-in-form').waitFor()
      expect(await page.getByTestId('action-cancel').count()).toBe(0)
      const consoleAnswer = await page.evaluate(async () => {
        const res = await fetch('/api/actions', {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({
            kind: 'retry',
            service: 'order',
            ids: [crypto.randomUUID()],
            dryRun: false,
          }),
        })
        return res.status
      })
      expect(consoleAnswer).toBe(401)
      const serviceAnswer = await fetch(`${s.fleet.one('order').url}/admin/messaging/parked/retry`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ ids: [crypto.randomUUID()] }),
      })
      expect(serviceAnswer.status).toBe(401)

      await page.getByTestId('sign-in-actor').fill('mallory')
      await page.getByTestId('sign-in-token').fill('not-the-admin-token-at-all')
      await page.getByTestId('sign-in-submit').click()
      await page.getByTestId('error-banner').waitFor()
      expect(await page.getByTestId('session-actor').count()).toBe(0)
    })

    it('when a dead-lettered shipment request is requeued from the page, then the order ends CONFIRMED and the action is recorded', async () => {
      const shipment = s.fleet.one('shipment')
      await shipment.restart({ CARRIER_ACCOUNT: '', CONSUMER_MAX_ATTEMPTS: '2' })
      const order = await s.place(orderBody([{ sku: 'E2E-CONSOLE', quantity: 1 }]))
      const deadLetter = await eventually(
        'the shipment request in a dead-letter queue',
        async () => {
          const res = await fetch(`${shipment.url}/admin/messaging/dead-letters?aggregateId=${order.id}`)
          const body = (await res.json()) as {
            queues: Array<{ queue: string; messages: Array<{ messageId: string }> }>
          }
          const queue = body.queues.find((q) => q.messages.length > 0)
          return queue && { queue: queue.queue, messageId: queue.messages[0]!.messageId }
        },
        { timeoutMs: 60_000, intervalMs: 500 },
      )
      await shipment.restart({ CARRIER_ACCOUNT: 'e2e-carrier' })

      await page.getByTestId('sign-in-actor').fill('e2e-operator')
      await page.getByTestId('sign-in-token').fill(s.fleet.adminToken)
      await page.getByTestId('sign-in-submit').click()
      await expect.poll(() => page.getByTestId('session-actor').innerText()).toContain('e2e-operator')

      await page.goto(`${consoleUrl}/orders/${order.id}`)
      const row = page.locator(`[data-testid="dead-letter-row"][data-message-id="${deadLetter.messageId}"]`)
      await row.waitFor({ timeout: 20_000 })
      await row.getByTestId('dead-letter-select').check()
      await page.getByTestId('action-requeue').click()
      const outcome = (table: string) =>
        page.locator(
          `[data-testid="${table}"] [data-testid="outcome-row"][data-id="${deadLetter.messageId}"]`,
        )
      expect(await outcome('dry-run-result').getAttribute('data-outcome')).toBe('would-requeue')
      await page.getByTestId('action-confirm').click()
      await outcome('action-result').waitFor({ timeout: 20_000 })
      expect(await outcome('action-result').getAttribute('data-outcome')).toBe('requeued')

      await s.awaitTerminal([order], 60_000)
      await page.reload()
      await expect
        .poll(() => page.getByTestId('order-status').innerText(), { timeout: 20_000 })
        .toContain('CONFIRMED')
      await page
        .locator('[data-testid="recorded-action-row"][data-action="dead-letters.requeue"]')
        .waitFor({ timeout: 20_000 })
      const recorded = (await (await fetch(`${shipment.url}/admin/messaging/actions`)).json()) as {
        actions: unknown[]
      }
      expect(recorded.actions[0]).toMatchObject({
        actor: 'e2e-operator',
        action: 'dead-letters.requeue',
        ids: [deadLetter.messageId],
      })

      await page.goto(`${consoleUrl}/orders`)
      await page.locator(`[data-testid="orders-list"] [data-order-id="${order.id}"]`).waitFor()
      await screenshot(page, 'orders')
    })

    it('when the console was used, then every invariant of the fleet holds', async () => {
      const report = await s.invariants()
      expect(report.violations).toEqual([])
    })
  })
}
