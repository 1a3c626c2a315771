import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Browser } from 'playwright-core'
import { launchBrowser, signedInAtRepair } from './support/browser.js'
import { startConsole, type RunningConsole } from './support/console.js'
import { blockedOrderedKey, startStubFleet, type StubFleet } from './support/stubs.js'

// Ordered keys held back, on the repair page in Debian's Chromium, against the stub fleet (the
// fleet has no ordered handler): inventory lists one blocked key, shipment cannot be read.
const TOKEN = `operator-${randomUUID()}`
const VIEWER_TOKEN = `viewer-${randomUUID()}`
const SKIP = '/admin/messaging/ordered-keys/skip'

let fleet: StubFleet
let console_: RunningConsole
let browser: Browser
const key = blockedOrderedKey()

/** A page on /repair signed in as `actor` with `token`. */
const signedIn = (actor: string, token: string) => signedInAtRepair(browser, console_.url, actor, token)

beforeAll(async () => {
  fleet = await startStubFleet()
  fleet.stubs.inventory.behaviour.answers.set('/admin/messaging/ordered-keys', {
    status: 200,
    body: { service: 'inventory', keys: [key] },
  })
  fleet.stubs.shipment.behaviour.answers.set('/admin/messaging/ordered-keys', {
    status: 500,
    body: { error: 'Internal Server Error', message: 'boom', details: [] },
  })
  console_ = await startConsole({ ...fleet.env, ADMIN_TOKEN: TOKEN, CONSOLE_VIEWER_TOKEN: VIEWER_TOKEN })
  browser = await launchBrowser()
})

afterAll(async () => {
  await browser?.close()
  await console_?.close()
  await fleet?.close()
})

describe('ordered keys held back in a browser', () => {
  it('when a key is blocked, then the repair page shows it (since when, by which message, how many wait) and an operator skips it after a dry run', async () => {
    const { context, page } = await signedIn('ada', TOKEN)
    try {
      const row = page.locator(`[data-testid="ordered-key-row"][data-key="${key.key}"]`)
      await row.waitFor()
      const text = await row.innerText()
      expect(text).toContain('inventory / apply-stock-change')
      expect(text).toContain('2026-12-06 10:00:00 UTC')
      expect(text).toContain(`message 4 (${key.blockedBy}) dead-lettered: ${key.reason}`)
      expect(await row.getByTestId('ordered-key-waiting').innerText()).toBe('7')
      expect(await page.getByTestId('ordered-keys-unread').innerText()).toContain('shipment')

      await row.getByTestId('ordered-key-skip').click()
      const preview = page.getByTestId('ordered-key-preview')
      await preview.waitFor()
      expect(await preview.getAttribute('data-outcome')).toBe('would-skip')
      expect(await preview.innerText()).toContain('from 3 to 4')
      const target = { handler: key.handler, producer: key.producer, key: key.key }
      expect(fleet.stubs.inventory.received.filter((r) => r.path === SKIP).map((r) => r.body)).toEqual([
        { ...target, dryRun: true },
      ])

      await page.getByTestId('ordered-key-confirm').click()
      await preview.waitFor({ state: 'detached' })
      const sent = fleet.stubs.inventory.received.filter((r) => r.path === SKIP)
      expect(sent.map((r) => r.body)).toEqual([
        { ...target, dryRun: true },
        { ...target, dryRun: false },
      ])
      expect(sent[1]?.headers).toMatchObject({ 'x-admin-actor': 'ada', 'x-admin-role': 'operator' })
    } finally {
      await context.close()
    }
  })

  it('when a viewer opens the repair page, then the key is shown without a skip', async () => {
    const { context, page } = await signedIn('vera', VIEWER_TOKEN)
    try {
      const row = page.locator(`[data-testid="ordered-key-row"][data-key="${key.key}"]`)
      await row.waitFor()
      expect(await row.getByTestId('ordered-key-skip').count()).toBe(0)
    } finally {
      await context.close()
    }
  })
})
