import { describe, expect, it } from 'vitest'
import { parseEnv, serviceEnvSchema } from './env.js'
import { messagingOptions, messagingSettings } from './messaging-settings.js'

const schema = serviceEnvSchema({ service: 'payment', port: 3002 })

describe('messagingSettings', () => {
  it('when the OUTBOX_*, CONSUMER_* and READY_* variables are set, then each lands on its option', () => {
    const env = {
      OUTBOX_BATCH_SIZE: '7',
      OUTBOX_POLL_INTERVAL_MS: '250',
      OUTBOX_PUBLISH_TIMEOUT_MS: '3000',
      OUTBOX_MAX_ATTEMPTS: '4',
      OUTBOX_PUBLISH_ON_COMMIT: 'false',
      OUTBOX_RETENTION_MS: '120000',
      CONSUMER_PREFETCH: '3',
      CONSUMER_MAX_ATTEMPTS: '6',
      CONSUMER_CONCURRENCY: '2',
      CONSUMER_BATCH_MAX: '1',
      CONSUMER_BATCH_BUDGET_MS: '12.5',
      READY_MAX_OUTBOX_AGE_MS: '30000',
    }
    const settings = messagingSettings(parseEnv(schema, env))
    expect(settings).toEqual({
      relay: {
        batchSize: Number(env.OUTBOX_BATCH_SIZE),
        pollIntervalMs: Number(env.OUTBOX_POLL_INTERVAL_MS),
        publishTimeoutMs: Number(env.OUTBOX_PUBLISH_TIMEOUT_MS),
        maxAttempts: Number(env.OUTBOX_MAX_ATTEMPTS),
        publishOnCommit: false,
        retentionMs: Number(env.OUTBOX_RETENTION_MS),
      },
      consumer: {
        prefetch: Number(env.CONSUMER_PREFETCH),
        maxAttempts: Number(env.CONSUMER_MAX_ATTEMPTS),
        concurrency: Number(env.CONSUMER_CONCURRENCY),
        batchMax: Number(env.CONSUMER_BATCH_MAX),
        batchBudgetMs: 12.5,
      },
      health: { outboxMaxAgeMs: Number(env.READY_MAX_OUTBOX_AGE_MS) },
    })
  })

  it('when CONSUMER_CONCURRENCY is unset, then concurrency stays undefined (messaging takes 40 % of the pool)', () => {
    const settings = messagingSettings(parseEnv(schema, {}))
    expect(settings.consumer.concurrency).toBeUndefined()
  })

  it('when CONSUMER_BATCH_MAX is unset, then batchMax stays undefined (messaging takes half the prefetch, at most 20)', () => {
    const settings = messagingSettings(parseEnv(schema, {}))
    expect(settings.consumer.batchMax).toBeUndefined()
  })

  it('when CONSUMER_BATCH_BUDGET_MS is unset, Infinity, a number or not more than 0, then the budget is unbounded, unbounded, that number or refused', () => {
    expect(messagingSettings(parseEnv(schema, {})).consumer.batchBudgetMs).toBe(Number.POSITIVE_INFINITY)
    const unbounded = parseEnv(schema, { CONSUMER_BATCH_BUDGET_MS: 'Infinity' })
    expect(messagingSettings(unbounded).consumer.batchBudgetMs).toBe(Number.POSITIVE_INFINITY)
    expect(
      messagingSettings(parseEnv(schema, { CONSUMER_BATCH_BUDGET_MS: '20' })).consumer.batchBudgetMs,
    ).toBe(20)
    expect(() => parseEnv(schema, { CONSUMER_BATCH_BUDGET_MS: '0' })).toThrow('CONSUMER_BATCH_BUDGET_MS')
  })

  it("when the fleet's options are built, then metrics and the outbox wake-up carry the fleet's names and the relay keeps its settings", () => {
    const config = parseEnv(schema, { OUTBOX_BATCH_SIZE: '7' })
    const pool = {} as never
    const options = messagingOptions(config, { service: 'payment', pool, handlers: [] })
    expect(options).toMatchObject({
      service: 'payment',
      exchange: 'saga.events',
      queuePrefix: 'payment',
      metricPrefix: 'saga_messaging',
      relay: { batchSize: 7, wakeup: { channel: 'saga_outbox' } },
    })
  })
})
