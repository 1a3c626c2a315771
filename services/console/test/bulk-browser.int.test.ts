import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Browser } from 'playwright-core'
import { eventually } from '@saga/testkit'
import { launchBrowser, signedInAtRepair } from './support/browser.js'
import { startConsole, type RunningConsole } from './support/console.js'
import { startMessagingService, type MessagingService } from './support/messaging-service.js'
import { orderFixture, startStubFleet, type OrderFixture, type StubFleet } from './support/stubs.js'

// Bulk repair and the two roles in Debian's Chromium: the console against a real payment service
// (@saga/messaging and its admin on PostgreSQL and RabbitMQ) and stubs for the other three.
const TOKEN = `operator-${randomUUID()}`
const VIEWER_TOKEN = `viewer-${randomUUID()}`
const LETTERS = 200

let fleet: StubFleet
let payment: MessagingService
let console_: RunningConsole
let browser: Browser
const fixture: OrderFixture = orderFixture()

/** A page on /repair signed in as `actor` with `token`. */
const signedIn = (actor: string, token: string) => signedInAtRepair(browser, console_.url, actor, token)

const recordedActions = async (): Promise<number> =>
  (await payment.db.pool.query('SELECT 1 FROM messaging_admin_action')).rowCount ?? 0

beforeAll(async () => {
  fleet = await startStubFleet([fixture])
  payment = await startMessagingService('payment', TOKEN)
  console_ = await startConsole({
    ...fleet.env,
    PAYMENT_URL: payment.url,
    ADMIN_TOKEN: TOKEN,
    CONSOLE_VIEWER_TOKEN: VIEWER_TOKEN,
  })
  browser = await launchBrowser()
})

afterAll(async () => {
  await browser?.close()
  await console_?.close()
  await payment?.close()
  await fleet?.close()
})

describe('bulk repair in a browser', () => {
  it('when 200 dead letters of one handler are requeued in bulk, then the dry run counts them, all are handled once, and the run is one recorded action with its filter and counts', async () => {
    const ids = await payment.deadLetter(LETTERS)
    expect(await payment.deadLettered()).toBe(LETTERS)
    const { context, page } = await signedIn('ada@ops', TOKEN)
    try {
      expect(await page.getByTestId('session-role').getAttribute('data-role')).toBe('operator')
      await page.getByTestId('bulk-service').selectOption('payment')
      await page.getByTestId('bulk-handler').fill(payment.handler)
      await page.getByTestId('bulk-reason').fill('downstream')
      await page.getByTestId('bulk-rate').fill('100')
      await page.getByTestId('bulk-dry-run').click()
      const preview = page.getByTestId('bulk-preview')
      await preview.waitFor()
      expect(await page.getByTestId('bulk-matched').innerText()).toBe(String(LETTERS))
      expect(
        await preview
          .locator('[data-testid="bulk-preview-service"][data-service="payment"]')
          .getAttribute('data-matched'),
      ).toBe(String(LETTERS))
      // The dry run changed nothing and recorded nothing.
      expect(await payment.deadLettered()).toBe(LETTERS)
      expect((await payment.db.pool.query('SELECT 1 FROM messaging_admin_action')).rowCount).toBe(0)

      payment.failing = false
      await page.getByTestId('bulk-run').click()
      const done = page.locator('[data-testid="bulk-progress"][data-state="done"]')
      await done.waitFor({ timeout: 60_000 })
      expect(await done.getAttribute('data-done')).toBe(String(LETTERS))
      expect(await done.getAttribute('data-matched')).toBe(String(LETTERS))

      await eventually('all 200 handled', async () => (await payment.handled()).length === LETTERS)
      expect(new Set(await payment.handled())).toEqual(new Set(ids))
      expect(await payment.deadLettered()).toBe(0)

      const { rows } = await payment.db.pool.query<{
        id: string
        actor: string
        action: string
        ids: string[]
        detail: Record<string, unknown>
      }>('SELECT id::text, actor, action, ids, detail FROM messaging_admin_action')
      expect(rows).toHaveLength(1)
      const [action] = rows
      expect(action).toMatchObject({ actor: 'ada@ops', action: 'dead-letters.requeue' })
      expect(new Set(action!.ids)).toEqual(new Set(ids))
      expect(action!.detail).toMatchObject({
        bulk: true,
        filter: { handler: payment.handler, reason: 'downstream' },
        matched: LETTERS,
        requeued: LETTERS,
        failed: 0,
        ratePerSecond: 100,
        state: 'done',
        role: 'operator',
      })
      expect(await page.getByTestId('bulk-recorded').innerText()).toContain(`payment:${action!.id}`)
    } finally {
      await context.close()
    }
  })
})

describe('two roles in a browser', () => {
  it('when nobody has signed in, then the page asks for a sign-in and shows no fleet data', async () => {
    const context = await browser.newContext({ viewport: { width: 1360, height: 900 } })
    try {
      const page = await context.newPage()
      await page.goto(`${console_.url}/`)
      await page.getByTestId('sign-in-to-read').waitFor()
      await page.getByTestId('sign-in-form').waitFor()
      expect(await page.getByTestId('services').count()).toBe(0)
    } finally {
      await context.close()
    }
  })

  it('when a viewer signs in, then the role is shown, no action is enabled, and the server refuses an action 403', async () => {
    const { context, page } = await signedIn('vera', VIEWER_TOKEN)
    try {
      expect(await page.getByTestId('session-role').innerText()).toBe('viewer')
      await page.getByTestId('bulk-viewer-note').waitFor()
      expect(await page.getByTestId('bulk-dry-run').isDisabled()).toBe(true)

      await page.goto(`${console_.url}/orders/${fixture.orderId}`)
      await page.getByTestId('dead-letters').waitFor()
      expect(await page.locator('[data-testid^="action-"]').count()).toBe(0)
      expect(await page.getByTestId('dead-letter-select').count()).toBe(0)

      const recordedBefore = await recordedActions()
      const answers = await page.evaluate(async (letterId) => {
        const post = (path: string, body: unknown) =>
          fetch(path, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify(body),
          })
        const single = await post('/api/actions', {
          kind: 'requeue',
          service: 'payment',
          queue: 'q',
          ids: [letterId],
          dryRun: false,
        })
        const bulk = await post('/api/bulk', { kind: 'requeue', filter: {}, dryRun: false })
        return [
          { status: single.status, body: await single.json() },
          { status: bulk.status, body: await bulk.json() },
        ]
      }, fixture.deadLetterId)
      for (const answer of answers)
        expect(answer).toEqual({
          status: 403,
          body: {
            error: 'Forbidden',
            message: 'Viewers may not act: sign in with the operator token',
            details: [{ path: 'session.role', issue: 'is viewer; only an operator acts' }],
          },
        })
      // Neither reached the service: it recorded nothing more.
      expect(await recordedActions()).toBe(recordedBefore)
    } finally {
      await context.close()
    }
  })
})
