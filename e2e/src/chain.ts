import { CancelReason, FailedStep, firstFact, OrderCancelled, sagaFacts } from '@saga/contracts'

/**
 * The facts a complete saga has, by how it ended, derived from the saga map: a confirmation needs
 * nothing more; a cancellation by a failing step needs the compensations of every step that had
 * succeeded. An order cancelled by its deadline or its customer (`reason` a `CancelReason`), or by
 * anything else outside the map, has no fixed walk: the chain may have been anywhere when the cancel
 * came, and each later fact may or may not have had an effect to undo. It expects only the cancel
 * itself here; the invariant checker judges it by the books instead (no capture left unrefunded, no
 * stock held, no live shipment) once every service has recorded the cancellation (snapshot.ts).
 */
export function expectedFacts(
  status: string,
  failedStep: string | null,
  reason: string | null = null,
): string[] {
  if (status === 'CONFIRMED') return sagaFacts()
  if (status !== 'CANCELLED') return [firstFact.routingKey]
  const step = FailedStep.safeParse(failedStep)
  if (!step.success || CancelReason.safeParse(reason).success)
    return [firstFact.routingKey, OrderCancelled.routingKey]
  return sagaFacts(step.data)
}
