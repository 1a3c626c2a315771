/**
 * The facts a complete saga has, by how it ended (design.md, "The chain"): a confirmation needs
 * nothing more; a cancellation needs the compensations of every step that had succeeded.
 */
export function expectedFacts(status: string, failedStep: string | null): string[] {
  if (status === 'CONFIRMED') {
    return ['order.created', 'payment.processed', 'stock.reserved', 'shipment.created', 'order.confirmed']
  }
  if (status !== 'CANCELLED') return ['order.created']
  switch (failedStep) {
    case 'payment':
      return ['order.created', 'payment.failed', 'order.cancelled']
    case 'stock':
      return [
        'order.created',
        'payment.processed',
        'stock.reservation-failed',
        'order.cancelled',
        'payment.refunded',
      ]
    case 'shipment':
      return [
        'order.created',
        'payment.processed',
        'stock.reserved',
        'shipment.failed',
        'order.cancelled',
        'payment.refunded',
        'stock.released',
      ]
    default:
      return ['order.created', 'order.cancelled']
  }
}
