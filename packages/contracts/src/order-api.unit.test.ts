import { describe, expect, it } from 'vitest'
import { ORDER_STATUSES, OrderStats, OrderStatus, WAITING_FOR, WaitingFor } from './index.js'
import { nextAfter, sagaFacts } from './saga-map.js'

describe('the order API shapes', () => {
  it('when the saga map is walked, then the steps a PENDING order can wait for are WAITING_FOR, in chain order', () => {
    const steps = sagaFacts()
      .flatMap((fact) => nextAfter(fact).map((next) => next.service))
      .filter((service) => service !== 'order')
    expect(steps).toEqual([...WAITING_FOR])
  })

  it('when the zod enums are read, then they hold exactly the plain constants', () => {
    expect(OrderStatus.options).toEqual([...ORDER_STATUSES])
    expect(WaitingFor.options).toEqual([...WAITING_FOR])
    expect(Object.keys(OrderStats.shape.byStatus.shape)).toEqual([...ORDER_STATUSES])
    expect(Object.keys(OrderStats.shape.pendingByStep.shape)).toEqual([...WAITING_FOR])
  })
})
