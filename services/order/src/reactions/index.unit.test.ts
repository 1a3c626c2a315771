import { reactionsOf } from '@saga/contracts'
import type { Logger } from '@saga/messaging'
import { describe, expect, it } from 'vitest'
import { orderReactions, timelineRecorder } from './index.js'

const logger: Logger = { debug() {}, info() {}, warn() {}, error() {} }
const deps = { logger, clock: () => new Date() }

describe('order reactions', () => {
  it('when the service registers its handlers, then they are exactly what the saga map gives it', () => {
    const recorder = timelineRecorder(deps)
    const registered = [
      ...orderReactions(deps).map((h) => ({ handler: h.name, type: h.message.type, recorder: false })),
      ...recorder.messages.map((m) => ({ handler: recorder.name, type: m.type, recorder: true })),
    ]
    const mapped = reactionsOf('order').map((r) => ({
      handler: r.handler,
      type: r.reactsTo.type,
      recorder: r.recorder === true,
    }))
    expect(registered).toEqual(mapped)
  })
})
