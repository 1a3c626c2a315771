import { describe, expect, it } from 'vitest'
import type { QueueChannel } from '../amqp/queue-channel.js'
import type { Relay } from '../outbox/relay.js'
import { messagingHealth, type HealthSettings } from './health.js'
import type { MessagingParts } from './parts.js'

const settings: HealthSettings = { outboxMaxAgeMs: 10_000, consumerStuckAfterMs: 60_000 }

/** A queue channel as health reads it. */
const queue = (name: string, state: Partial<QueueChannel> = {}): QueueChannel =>
  ({
    queue: name,
    consuming: true,
    notConsumingSince: undefined,
    problem: undefined,
    ...state,
  }) as QueueChannel

/** Parts with one recorder queue, a relay and a consumer connection in the given states. */
function parts(
  options: { channel?: QueueChannel; connected?: boolean; oldestPendingAgeMs?: number } = {},
): MessagingParts {
  const connected = options.connected ?? true
  const relay = {
    isConnected: connected,
    blocked: undefined,
    stats: () => ({ pending: 2, parked: 0, oldestPendingAgeMs: options.oldestPendingAgeMs ?? 0 }),
  } as unknown as Relay
  return {
    relay,
    consumer: undefined,
    recorders: [
      { channel: options.channel ?? queue('order.record-timeline') },
    ] as unknown as MessagingParts['recorders'],
    consumerConnection: {
      isConnected: connected,
      blocked: undefined,
    } as MessagingParts['consumerConnection'],
  }
}

const areaOf = (p: MessagingParts, name: string, now = 0) =>
  messagingHealth(p, settings, now).areas.find((a) => a.area === name)

describe('messaging health areas', () => {
  it('when everything works, then every area is up and the whole is ok', () => {
    const health = messagingHealth(parts(), settings, 0)
    expect(health.ok).toBe(true)
    expect(health.areas.map((a) => [a.area, a.status, a.probe])).toEqual([
      ['broker', 'up', 'report'],
      ['outbox', 'up', 'report'],
      ['consumer', 'up', 'liveness'],
    ])
  })

  it('when the broker is away, then broker is down (report only) and a queue waiting for it is degraded, never down', () => {
    const waiting = queue('q', { consuming: false, problem: 'the broker connection is down' })
    const p = parts({ connected: false, channel: waiting })
    expect(areaOf(p, 'broker')).toMatchObject({ status: 'down', probe: 'report' })
    // Time without the broker does not count towards "stuck": no restart brings a broker back.
    expect(areaOf(p, 'consumer', 10 * 60_000)).toMatchObject({ status: 'degraded' })
  })

  it('when a queue stays unconsumed with the broker up, then consumer is degraded within the grace and down past it, naming the queue and why', () => {
    const stuck = queue('order.record-timeline', {
      consuming: false,
      notConsumingSince: 1_000,
      problem: 'queue order.record-timeline does not exist',
    })
    const p = parts({ channel: stuck })
    expect(areaOf(p, 'consumer', 1_000 + 59_000)).toMatchObject({ status: 'degraded', ok: false })
    const down = areaOf(p, 'consumer', 1_000 + 60_001)
    expect(down).toMatchObject({ status: 'down', probe: 'liveness', facts: { stuckForMs: 60_001 } })
    expect(down?.detail).toBe(
      'not consuming every queue: order.record-timeline (queue order.record-timeline does not exist, for 60001 ms)',
    )
  })

  it('when the connections are on nodes of a cluster, then the broker facts name each node and the cluster, and null while down', () => {
    const p = parts()
    const on = (address: string) => ({ node: { address, cluster: 'rabbit@rabbit-1' } })
    Object.assign(p.relay as object, on('rabbit-1:5672'))
    Object.assign(p.consumerConnection as object, on('rabbit-3:5672'))
    expect(areaOf(p, 'broker')?.facts).toMatchObject({
      relayBroker: 'rabbit-1:5672',
      consumerBroker: 'rabbit-3:5672',
      brokerCluster: 'rabbit@rabbit-1',
    })
    expect(areaOf(parts({ connected: false }), 'broker')?.facts).toMatchObject({
      relayBroker: null,
      consumerBroker: null,
      brokerCluster: null,
    })
  })

  it('when the oldest pending outbox row passes the limit, then outbox is down with its age', () => {
    expect(areaOf(parts({ oldestPendingAgeMs: 20_000 }), 'outbox')).toMatchObject({
      status: 'down',
      detail: 'oldest pending row is 20000 ms old (limit 10000 ms)',
      facts: { oldestPendingAgeMs: 20_000, pending: 2 },
    })
  })
})
