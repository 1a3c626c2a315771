import { describe, expect, it } from 'vitest'
import { brokerAddresses, firstAddress, retryDelay, splitBrokerUrls } from './broker-addresses.js'

const CLUSTER =
  'amqp://u:S3cret@rabbit-1:5672 , amqps://u:S3cret@rabbit-2/vh?heartbeat=3,amqp://u:S3cret@rabbit-3:5673'

describe('broker addresses', () => {
  it('when the setting lists three nodes, then each is an address in order, trimmed, with host:port and the heartbeat', () => {
    expect(brokerAddresses(CLUSTER, 10)).toEqual([
      { url: 'amqp://u:S3cret@rabbit-1:5672?heartbeat=10', hostPort: 'rabbit-1:5672' },
      { url: 'amqps://u:S3cret@rabbit-2/vh?heartbeat=3', hostPort: 'rabbit-2:5671' },
      { url: 'amqp://u:S3cret@rabbit-3:5673?heartbeat=10', hostPort: 'rabbit-3:5673' },
    ])
  })

  it('when the setting is one URL, then it is the one address', () => {
    expect(brokerAddresses('amqp://guest:guest@127.0.0.1', 10)).toEqual([
      { url: 'amqp://guest:guest@127.0.0.1?heartbeat=10', hostPort: '127.0.0.1:5672' },
    ])
  })

  it.each([
    ['amqp://u:S3cret@a:5672,,amqp://u:S3cret@c:5672', 'AMQP URL 2 of 3 is empty'],
    ['amqp://u:S3cret@a:5672,', 'AMQP URL 2 of 2 is empty'],
    [
      'amqp://u:S3cret@a:5672,http://u:S3cret@b:5672',
      'AMQP URL 2 of 2 is not a valid amqp:// or amqps:// URL',
    ],
    ['amqp://u:S3cret@a:5672,rabbit-2:S3cret', 'AMQP URL 2 of 2 is not a valid amqp:// or amqps:// URL'],
    ['amqp://u:S3cret@a:99999', 'The AMQP URL is not a valid amqp:// or amqps:// URL'],
    ['', 'The AMQP URL is empty'],
  ])('when the setting is %j, then the error is "%s" and quotes no password', (value, message) => {
    expect(() => brokerAddresses(value, 10)).toThrow(new Error(message))
  })

  it('when a password holds a percent-encoded comma, then it stays one entry', () => {
    expect(splitBrokerUrls('amqp://u:a%2Cb@h:5672')).toEqual(['amqp://u:a%2Cb@h:5672'])
  })

  it('when connections have different names, then their first addresses spread over the nodes, the same name always the same', () => {
    const names = ['order', 'payment', 'inventory', 'shipment'].flatMap((s) => [
      `${s}-relay`,
      `${s}-consumer`,
    ])
    const first = names.map((name) => firstAddress(`host/1/${name}`, 3))
    expect(new Set(first)).toEqual(new Set([0, 1, 2]))
    expect(names.map((name) => firstAddress(`host/1/${name}`, 3))).toEqual(first)
    expect(firstAddress('anything', 1)).toBe(0)
  })

  it('when connects fail over three addresses, then the next is tried at once and the backoff grows once per failed round', () => {
    const delays = [0, 1, 2, 3, 4, 5].map((attempt) => retryDelay(attempt, 3, 100, 1_000))
    expect(delays.map((d) => d > 0)).toEqual([false, false, true, false, false, true])
    expect(delays[2]).toBeGreaterThanOrEqual(50)
    expect(delays[2]).toBeLessThanOrEqual(100)
    expect(delays[5]).toBeGreaterThanOrEqual(100)
    expect(delays[5]).toBeLessThanOrEqual(200)
  })

  it('when there is one address, then every failure backs off as before (100 ms doubling)', () => {
    for (const attempt of [0, 1, 2, 3]) {
      const delay = retryDelay(attempt, 1, 100, 1_000)
      expect(delay).toBeGreaterThanOrEqual(50 * 2 ** attempt)
      expect(delay).toBeLessThanOrEqual(100 * 2 ** attempt)
    }
  })
})
