import { randomUUID } from 'node:crypto'
import type { OrderView } from '../../src/shapes.js'

/**
 * An order as `GET /orders/:id` answers it, for the join's unit tests: PENDING, placed
 * 2026-12-01 12:00:00 UTC with its deadline ten minutes later, no events; `overrides` over that.
 */
export function orderView(overrides: Partial<OrderView> = {}): OrderView {
  return {
    id: randomUUID(),
    customerId: randomUUID(),
    status: 'PENDING',
    currency: 'EUR',
    total: 100,
    cancellationReason: null,
    failedStep: null,
    waitingFor: null,
    createdAt: '2026-12-01T12:00:00.000Z',
    updatedAt: '2026-12-01T12:00:00.000Z',
    deadlineAt: '2026-12-01T12:10:00.000Z',
    confirmedAt: null,
    cancelledAt: null,
    items: [{ sku: 'MUG-001', quantity: 1, unitPrice: 100 }],
    shippingAddress: { name: 'Ada', line1: '1 Engine St', city: 'London', postalCode: 'N1', country: 'GB' },
    events: [],
    ...overrides,
  }
}
