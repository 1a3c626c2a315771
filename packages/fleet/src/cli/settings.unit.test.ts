import { describe, expect, it } from 'vitest'
import { brokerUnreachable, loadSettings } from './settings.js'

describe('loadSettings', () => {
  it('when no prefix is given, then the names are those of the unprefixed fleet of npm start', () => {
    const settings = loadSettings({})
    expect(settings.exchange).toBe('saga.events')
    expect(settings.services.payment).toEqual({
      url: 'http://127.0.0.1:3002',
      databaseUrl: 'postgres://payment_service:payment_service@127.0.0.1:5432/payment_service',
      queuePrefix: 'payment',
    })
  })

  it('when a prefix is given, then the databases, queues and exchange are those npm start -- --prefix made, and the ports npm start took', () => {
    const settings = loadSettings({ PAYMENT_PORT: '3302' }, 'fu_')
    expect(settings.exchange).toBe('fu_saga.events')
    expect(settings.services.payment).toEqual({
      url: 'http://127.0.0.1:3302',
      databaseUrl: 'postgres://fu_payment_service:fu_payment_service@127.0.0.1:5432/fu_payment_service',
      queuePrefix: 'fu_payment',
    })
  })

  it('when a variable names a value, then it wins over the prefix', () => {
    const settings = loadSettings({ AMQP_EXCHANGE: 'other.events', PAYMENT_QUEUE_PREFIX: 'pay' }, 'fu_')
    expect(settings.exchange).toBe('other.events')
    expect(settings.services.payment.queuePrefix).toBe('pay')
  })
})

describe('brokerUnreachable', () => {
  it('when the exchange does not exist, then it names it and the --prefix, not the broker, as the cause', () => {
    const error = new Error(
      "Channel closed by server: 404 (NOT-FOUND) with message \"NOT_FOUND - no exchange 'saga.events' in vhost '/'\"",
    )
    expect(brokerUnreachable('amqp://guest:guest@127.0.0.1:5672', error)).toBe(
      "the broker at 127.0.0.1:5672 has no exchange 'saga.events': no fleet has run with these names; " +
        'if npm start was given --prefix, give the CLI the same --prefix (or AMQP_EXCHANGE the exchange)',
    )
  })
})
