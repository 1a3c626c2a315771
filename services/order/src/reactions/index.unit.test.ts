import { reactionsOf } from '@saga/contracts'
import type { Logger } from '@saga/messaging'
import { describe, expect, it } from 'vitest'
import { orderReactions } from './index.js'

const logger: Logger = { debug() {}, info() {}, warn() {}, error() {} }
const deps = { logger, clock: () => new Date() }

describe('order reactions', () => {
  it('when the service registers its handlers, then they are exactly what the saga map gives it', () => {
    const registered = orderReactions(deps).map((h) => ({ handler: h.name, type: h.message.type }))
    const mapped = reactionsOf('order').map((r) => ({ handler: r.handler, type: r.reactsTo.type }))
    expect(registered).toEqual(mapped)
  })
})
