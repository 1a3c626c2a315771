import { describe, expect, it } from 'vitest'
import { formatStep, outcome, TimeOrder, type Step } from './follow.js'

const origin = new Date('2026-11-30T12:00:00.000Z')
const step = (messageId: string, ms: number): Step => ({
  routingKey: 'x.y',
  type: `${messageId}.v1`,
  service: 'order',
  messageId,
  at: new Date(origin.getTime() + ms),
  source: 'live',
})
const ids = (steps: Step[]) => steps.map((s) => s.messageId)

describe('TimeOrder', () => {
  it('when a later fact arrives before an earlier one within the hold, then they come out in time order', () => {
    const order = new TimeOrder(250)
    order.add(step('refunded', 84), 1_000)
    order.add(step('released', 79), 1_020)
    expect(order.due(1_100)).toEqual([]) // both still held
    expect(ids(order.due(1_250))).toEqual(['released', 'refunded'])
    expect(order.due(2_000)).toEqual([])
  })

  it('when a held step is due, then earlier steps still held are released with it, later ones stay', () => {
    const order = new TimeOrder(250)
    order.add(step('b', 20), 1_000)
    order.add(step('a', 10), 1_200)
    order.add(step('c', 30), 1_200)
    expect(ids(order.due(1_250))).toEqual(['a', 'b'])
    expect(ids(order.due(1_450))).toEqual(['c'])
  })

  it('when drained, then every held step comes out oldest first', () => {
    const order = new TimeOrder(250)
    for (const [id, ms] of [
      ['c', 3],
      ['a', 1],
      ['b', 2],
    ] as const)
      order.add(step(id, ms), 0)
    expect(ids(order.drain())).toEqual(['a', 'b', 'c'])
    expect(order.drain()).toEqual([])
  })
})

describe('formatStep', () => {
  it('when given the origin, then the offset is ms since it, never negative', () => {
    expect(formatStep(step('m', 84), origin)).toBe(`  +    84 ms  m.v1${' '.repeat(26)} order      m`)
    expect(formatStep(step('m', -3), origin)).toContain('+     0 ms')
  })
})

describe('outcome', () => {
  const id = '0b6f5d5e-9d7c-4d1b-8f51-6c2f7c1a2b3c'

  it('when a terminal event was seen, then the final status, exit 0', () => {
    expect(outcome(id, 'CANCELLED', 'card_declined', true, 3_000)).toEqual({
      lines: ['final status: CANCELLED (card_declined)'],
      code: 0,
    })
  })

  it('when the timeout passed with the order PENDING, then it says it is still PENDING after the timeout, exit 3', () => {
    expect(outcome(id, 'PENDING', undefined, false, 3_000)).toEqual({
      lines: [
        `order ${id} is still PENDING after the 3000 ms timeout; run \`npm run order -- where ${id}\` to see what it waits for`,
      ],
      code: 3,
    })
  })

  it('when the timeout passed but the service reports a final status, then that status without calling it final, exit 3', () => {
    const result = outcome(id, 'CONFIRMED', undefined, false, 3_000)
    expect(result.code).toBe(3)
    expect(result.lines[0]).toContain(
      `order ${id} is CONFIRMED, but its final event was not seen within the 3000 ms timeout`,
    )
    expect(result.lines.join('\n')).not.toContain('final status')
  })
})
