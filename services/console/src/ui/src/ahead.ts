import type { PendingStep, WaitReason } from './api.js'
import { clock, duration, eventName, timeOfDay, type Zone } from './format.js'

/** `ShipmentCreated or ShipmentFailed`: what a step ahead may emit, success first. */
export const stepOutcomes = (step: PendingStep): string => step.oneOf.map(eventName).join(' or ')

/**
 * One reason a step waits, as the page says it, e.g. `shipment down since 13:53:16 (2 min 4 s):
 * not live: unreachable (ECONNREFUSED)`. Times in `zone`; `now` and `at` (ms since the epoch) are
 * the page's clock and the join's, so durations keep counting between two reads of the order.
 */
export function reasonText(
  reason: WaitReason,
  step: PendingStep,
  zone: Zone,
  now: number,
  at: number,
): string {
  const fact = eventName(step.reactsTo)
  const ago = (iso: string | null) => (iso === null ? '–' : duration(Math.max(0, now - Date.parse(iso))))
  switch (reason.kind) {
    case 'service':
      return `${reason.service} ${reason.health} since ${timeOfDay(reason.since, zone)} (${ago(reason.since)})${reason.reason === null ? '' : `: ${reason.reason}`}`
    case 'queue': {
      const figures = `its queue: ${reason.ready ?? '?'} ready, ${reason.consumers ?? '?'} consumers`
      return reason.stale ? `${figures} (as of ${timeOfDay(reason.asOf, zone)})` : figures
    }
    case 'unpublished':
      return reason.state === 'parked'
        ? `${fact} parked in ${reason.producer ?? '?'}'s outbox after ${reason.attempts} attempts${reason.lastError === null ? '' : `: ${reason.lastError}`}`
        : `${fact} not yet published by ${reason.producer ?? '?'} (${reason.attempts} attempts${reason.lastError === null ? '' : `: ${reason.lastError}`})`
    case 'not-consumed': {
      const published = `published ${clock(reason.since, zone)} (${ago(reason.since)} ago)`
      return reason.inboxRead
        ? `${fact} not consumed yet, ${published}`
        : `${fact} ${published}; consumed? unknown, ${step.service} could not be read`
    }
    case 'dead-letter':
      return `${fact} dead-lettered ${clock(reason.at, zone)}: ${reason.reason ?? 'no reason given'}`
    case 'deadline': {
      const left = reason.leftMs - (now - at)
      return left < 0 ? `deadline passed ${duration(-left)} ago` : `deadline in ${duration(left)}`
    }
  }
}
