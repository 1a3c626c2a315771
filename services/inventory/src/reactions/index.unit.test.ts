import { reactionsOf } from '@saga/contracts'
import type { Logger } from '@saga/messaging'
import { describe, expect, it } from 'vitest'
import { inventoryReactions } from './index.js'

const logger: Logger = { debug() {}, info() {}, warn() {}, error() {} }
const deps = { logger, clock: () => new Date() }

describe('inventory reactions', () => {
  it('when the service registers its handlers, then they are exactly what the saga map gives it', () => {
    const registered = inventoryReactions(deps).map((h) => ({ handler: h.name, type: h.message.type }))
    const mapped = reactionsOf('inventory').map((r) => ({ handler: r.handler, type: r.reactsTo.type }))
    expect(registered).toEqual(mapped)
  })
})
