import type { HandlerCounters } from './handle-delivery.js'

/** Zeroed counters of one handler, or of their sum. */
export const noCounters = (): HandlerCounters => ({
  handledTotal: 0,
  duplicatesTotal: 0,
  retriedTotal: 0,
  deadLetteredTotal: 0,
  inFlight: 0,
  batchesTotal: 0,
  batchFallbacksTotal: 0,
  transientRetriedTotal: 0,
  heldTotal: 0,
  held: 0,
  orderWaitedTotal: 0,
  orderReleasedTotal: 0,
  orderPutBackTotal: 0,
  orderSettledTotal: 0,
  orderBlocked: 0,
  orderWaiting: 0,
  orderGaps: 0,
})
