import { describe, expect, it } from 'vitest'
import { checkPostgres, checkRabbitMq, formatPreflightFailures, preflight } from '../src/preflight.js'

const postgresUrl = process.env.POSTGRES_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres'
const amqpUrl = process.env.AMQP_URL ?? 'amqp://guest:guest@127.0.0.1:5672'

describe('preflight', () => {
  it('when both dependencies run, then both are reported reachable', async () => {
    const results = await preflight({ postgresUrl, amqpUrl })
    expect(results.map((r) => [r.name, r.ok])).toEqual([
      ['PostgreSQL', true],
      ['RabbitMQ', true],
    ])
    expect(formatPreflightFailures(results)).toBe('')
  })

  it('when nothing listens at the addresses, then the message names each, its address and how to start it', async () => {
    // Port 1 (tcpmux) is closed on loopback: the connect is refused at once.
    const results = await Promise.all([
      checkPostgres('postgresql://postgres@127.0.0.1:1/postgres'),
      checkRabbitMq('amqp://guest:guest@127.0.0.1:1'),
    ])
    const text = formatPreflightFailures(results)
    expect(text).toContain('PostgreSQL is not reachable at 127.0.0.1:1')
    expect(text).toContain('pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql) main start')
    expect(text).toContain('RabbitMQ is not reachable at 127.0.0.1:1')
    expect(text).toContain('rabbitmq-server -detached')
    expect(text).toMatch(/ECONNREFUSED/)
  })
})
