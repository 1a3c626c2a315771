import { describe, expect, it } from 'vitest'
import type { FleetDeadLetter } from './admin-http.js'
import { awaitedLines, deadLetterLines, fateLines, formatDuration } from './where.js'

const now = new Date('2026-11-30T12:00:00.000Z')

describe('fateLines', () => {
  it('when the order is PENDING, then it shows the deadline and the time left', () => {
    expect(fateLines({ status: 'PENDING', deadlineAt: '2026-11-30T12:04:05.000Z' }, now)).toEqual([
      'deadline: 2026-11-30T12:04:05.000Z (4m 5s left; then it is cancelled as deadline_exceeded)',
    ])
  })

  it('when a PENDING order is past its deadline, then it says how long ago it passed', () => {
    expect(fateLines({ status: 'PENDING', deadlineAt: '2026-11-30T11:59:58.000Z' }, now)[0]).toContain(
      'passed 2s ago',
    )
  })

  it('when the order was cancelled, then the cause names the customer, an operator, the deadline with its step, or the failed step', () => {
    expect(fateLines({ status: 'CANCELLED', cancellationReason: 'customer_requested' }, now)).toEqual([
      'cause: the customer cancelled it',
    ])
    expect(fateLines({ status: 'CANCELLED', cancellationReason: 'operator_requested' }, now)).toEqual([
      "cause: an operator cancelled it (the order service's admin actions say who)",
    ])
    expect(
      fateLines(
        {
          status: 'CANCELLED',
          cancellationReason: 'deadline_exceeded',
          failedStep: 'shipment',
          deadlineAt: '2026-11-30T11:50:00.000Z',
        },
        now,
      ),
    ).toEqual(['cause: its deadline (2026-11-30T11:50:00.000Z) passed while it waited for shipment'])
    expect(
      fateLines({ status: 'CANCELLED', cancellationReason: 'card_declined', failedStep: 'payment' }, now),
    ).toEqual(['cause: the payment step failed (card_declined)'])
  })

  it('when the order service recorded a fact as late, then it is listed', () => {
    const events = [
      { type: 'order.created.v1', note: null },
      { type: 'shipment.created.v1', note: 'late: the order was already CANCELLED' },
    ]
    expect(fateLines({ status: 'CANCELLED', cancellationReason: 'customer_requested', events }, now)).toEqual(
      [
        'cause: the customer cancelled it',
        'late fact: shipment.created.v1 (late: the order was already CANCELLED)',
      ],
    )
  })
})

describe('formatDuration', () => {
  it('when given ms, then whole seconds with the largest units first', () => {
    expect(formatDuration(3_723_400)).toBe('1h 2m 3s')
    expect(formatDuration(59_000)).toBe('59s')
    expect(formatDuration(60_000)).toBe('1m 0s')
  })
})

describe('awaitedLines', () => {
  const urls = { payment: 'http://127.0.0.1:3002', inventory: 'http://127.0.0.1:3003' }

  it('when the awaited service does not answer its health probe, then it says so with its URL', () => {
    expect(
      awaitedLines(['payment'], urls, {
        payment: { answering: false, reason: 'connect ECONNREFUSED 127.0.0.1:3002' },
      }),
    ).toEqual([
      '  payment is not answering at http://127.0.0.1:3002 (connect ECONNREFUSED 127.0.0.1:3002): is it running? (the fact waits in its queue)',
    ])
  })

  it('when the awaited service answers (any status), then the consumer has not committed its reaction yet', () => {
    expect(awaitedLines(['payment'], urls, { payment: { answering: true, status: 503 } })).toEqual([
      '  the last fact was published; the consumer in payment has not committed its reaction yet',
    ])
  })

  it('when one of two awaited services is down, then one line each', () => {
    expect(
      awaitedLines(['payment', 'inventory', 'payment'], urls, {
        payment: { answering: true, status: 200 },
        inventory: { answering: false, reason: 'no answer within 2000 ms' },
      }),
    ).toEqual([
      '  inventory is not answering at http://127.0.0.1:3003 (no answer within 2000 ms): is it running? (the fact waits in its queue)',
      '  the last fact was published; the consumer in payment has not committed its reaction yet',
    ])
  })
})

describe('deadLetterLines', () => {
  const refused = (service: 'payment' | 'order' | 'inventory' | 'shipment') => ({
    service,
    error: `the ${service} service did not answer (connect ECONNREFUSED)`,
  })
  const poison: FleetDeadLetter = {
    service: 'payment',
    queue: 'payment.order-created.dlq',
    messageId: 'm-1',
    type: 'order.created.v1',
    routingKey: 'order.created',
    correlationId: null,
    causationId: null,
    aggregateId: null,
    reason: 'invalid payload',
    handler: 'process-payment',
    deadLetteredAt: null,
    payload: {},
  }

  it('when every service answers with none, then one line says none', () => {
    expect(deadLetterLines({ found: [], failed: [] })).toEqual(['dead letters: none'])
  })

  it('when a service cannot say, then it is named unknown and "none" names only the services that answered', () => {
    expect(deadLetterLines({ found: [], failed: [refused('payment')] })).toEqual([
      'dead letters of payment: unknown (the payment service did not answer (connect ECONNREFUSED))',
      'dead letters in order, inventory, shipment: none',
    ])
  })

  it('when no service can say, then only the unknowns are written', () => {
    const failed = [refused('order'), refused('payment'), refused('inventory'), refused('shipment')]
    expect(deadLetterLines({ found: [], failed })).toEqual(
      failed.map((f) => `dead letters of ${f.service}: unknown (${f.error})`),
    )
  })

  it('when dead letters are found, then one line each under the header, with its queue, id, type and reason', () => {
    expect(deadLetterLines({ found: [poison], failed: [refused('shipment')] })).toEqual([
      'dead letters of shipment: unknown (the shipment service did not answer (connect ECONNREFUSED))',
      'dead letters in order, payment, inventory: ',
      '  payment.order-created.dlq: m-1 order.created.v1 reason="invalid payload"',
    ])
  })
})
