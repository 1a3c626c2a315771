import { FailedStep, firstFact, OrderCancelled, sagaFacts } from '@saga/contracts'

/**
 * The facts a complete saga has, by how it ended, derived from the saga map: a confirmation needs
 * nothing more; a cancellation needs the compensations of every step that had succeeded. A
 * cancellation without a failed step of the map (e.g. by a person) expects only the cancel itself.
 */
export function expectedFacts(status: string, failedStep: string | null): string[] {
  if (status === 'CONFIRMED') return sagaFacts()
  if (status !== 'CANCELLED') return [firstFact.routingKey]
  const step = FailedStep.safeParse(failedStep)
  return step.success ? sagaFacts(step.data) : [firstFact.routingKey, OrderCancelled.routingKey]
}
