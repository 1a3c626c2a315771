import { reactionsOf, type ServiceName } from '@saga/contracts'
import type { ReactionDeps } from '@saga/messaging'
import type { Logger } from '@saga/messaging/parts'
import { describe, expect, it } from 'vitest'

/**
 * A handler as a service registers it: its name, the contract of the message it consumes and the
 * older versions it upcasts from.
 */
export interface RegisteredHandler {
  name: string
  message: { type: string }
  upcasts?: readonly { from: { type: string } }[] | undefined
}

/** A recorder as a service registers it: one handler name for every message type it records. */
export interface RegisteredRecorder {
  name: string
  messages: readonly { type: string }[]
}

const silent: Logger = { debug() {}, info() {}, warn() {}, error() {} }

/**
 * The suite of a service's reaction list (a vitest `describe` of its own): the handlers
 * `reactions(deps)` returns, then the messages of `recorder(deps)` when given (deps: a silent logger
 * and the wall clock), are exactly the saga map's reactions of `service`, in the map's order, by
 * handler name, consumed message type, the older versions read through upcasters (`alsoReads`) and
 * whether the map marks it a recorder.
 */
export function describeSagaReactions(
  service: ServiceName,
  reactions: (deps: ReactionDeps) => readonly RegisteredHandler[],
  recorder?: (deps: ReactionDeps) => RegisteredRecorder,
): void {
  describe(`${service} reactions`, () => {
    it('when the service registers its handlers, then they are exactly what the saga map gives it', () => {
      const deps = { logger: silent, clock: () => new Date() }
      const recorded = recorder?.(deps)
      const registered = [
        ...reactions(deps).map((h) => ({
          handler: h.name,
          type: h.message.type,
          upcastsFrom: (h.upcasts ?? []).map((u) => u.from.type),
          recorder: false,
        })),
        ...(recorded?.messages ?? []).map((m) => ({
          handler: recorded?.name,
          type: m.type,
          upcastsFrom: [],
          recorder: true,
        })),
      ]
      const mapped = reactionsOf(service).map((r) => ({
        handler: r.handler,
        type: r.reactsTo.type,
        upcastsFrom: (r.alsoReads ?? []).map((u) => u.from.type),
        recorder: r.recorder === true,
      }))
      expect(registered).toEqual(mapped)
    })
  })
}
