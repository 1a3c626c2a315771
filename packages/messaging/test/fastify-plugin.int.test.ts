/**
 * `messagingPlugin` as fastify sees it, without fastify-plugin: registered in an app it decorates the
 * app itself (encapsulation skipped), is known by its name, and refuses to load without `db`.
 */
import Fastify, { type FastifyInstance, type FastifyPluginAsync } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  AMQP_URL,
  createTestDatabase,
  deleteBrokerObjects,
  uniqueName,
  type TestDatabase,
} from '@saga/testkit'
import { messagingPlugin } from '../src/fastify/index.js'
import type { Messaging } from '../src/messaging.js'
import { MESSAGING_SQL } from './inbox-fixture.js'

/** A stand-in for the service's database plugin: the dependency `messagingPlugin` names. */
const dbPlugin: FastifyPluginAsync = Object.assign(() => Promise.resolve(), {
  [Symbol.for('skip-override')]: true,
  [Symbol.for('plugin-meta')]: { name: 'db' },
})

let db: TestDatabase
const exchange = uniqueName('plugin_events')

beforeAll(async () => {
  db = await createTestDatabase({ prefix: 'messaging_plugin', sqlFiles: [MESSAGING_SQL] })
})

afterAll(async () => {
  await deleteBrokerObjects({ exchanges: [exchange] })
  await db?.drop()
})

describe('messagingPlugin', () => {
  it('when registered in an app, then app.messaging is visible outside the plugin, the plugin is named messaging, and close stops it', async () => {
    const app: FastifyInstance = Fastify()
    try {
      await app.register(dbPlugin)
      await app.register(messagingPlugin, {
        service: 'plugin-test',
        pool: db.pool,
        amqpUrl: AMQP_URL,
        exchange,
      })
      // A sibling registered after it sees the decorator too: it lives on the app, not in a child context.
      let seenBySibling = false
      await app.register((sibling) => {
        seenBySibling = sibling.hasDecorator('messaging')
        return Promise.resolve()
      })
      await app.ready()

      expect(app.hasDecorator('messaging')).toBe(true)
      expect(seenBySibling).toBe(true)
      expect(app.hasPlugin('messaging')).toBe(true)
      const messaging = (app as unknown as { messaging: Messaging }).messaging
      expect(messaging.health().areas.find((a) => a.area === 'broker')).toMatchObject({ ok: true })
    } finally {
      await app.close()
    }
  })

  it('when registered without a plugin named db, then the app refuses to start, naming db', async () => {
    const app = Fastify()
    const start = async () => {
      await app.register(messagingPlugin, {
        service: 'plugin-test',
        pool: db.pool,
        amqpUrl: AMQP_URL,
        exchange,
      })
      await app.ready()
    }
    await expect(start()).rejects.toThrow("The dependency 'db' of plugin 'messaging' is not registered")
    expect(app.hasDecorator('messaging')).toBe(false)
    await app.close().catch(() => undefined)
  })
})
