import { useConsole } from './context.js'
import type { OrderSummary } from './api.js'
import { dateTime, money, shortId } from './format.js'
import { Link } from './router.js'

/** Props of `OrdersTable`. */
export interface OrdersTableProps {
  orders: OrderSummary[]
  testId: string
  /** Selected order ids, when the table offers selection (for cancel). */
  selected?: Set<string> | undefined
  onToggle?: ((id: string) => void) | undefined
}

/** Orders, one row each (`data-order-id`), the id linking to the order's page. */
export function OrdersTable({ orders, testId, selected, onToggle }: OrdersTableProps) {
  const { zone } = useConsole()
  return (
    <table data-testid={testId}>
      <thead>
        <tr>
          {onToggle && <th />}
          <th>order</th>
          <th>customer</th>
          <th>status</th>
          <th>waiting for</th>
          <th>reason</th>
          <th className="num">total</th>
          <th>placed</th>
          <th>deadline</th>
        </tr>
      </thead>
      <tbody>
        {orders.map((o) => (
          <tr key={o.id} data-testid="order-row" data-order-id={o.id} data-status={o.status}>
            {onToggle && (
              <td>
                {o.status === 'PENDING' && (
                  <input
                    type="checkbox"
                    data-testid="order-select"
                    aria-label={`select order ${o.id}`}
                    checked={selected?.has(o.id) ?? false}
                    onChange={() => onToggle(o.id)}
                  />
                )}
              </td>
            )}
            <td className="mono" title={o.id}>
              <Link to={`/orders/${o.id}`} testId="order-link">
                {shortId(o.id)}
              </Link>
            </td>
            <td className="mono" title={o.customerId}>
              <Link to={`/orders?customerId=${o.customerId}`} testId="customer-link">
                {shortId(o.customerId)}
              </Link>
            </td>
            <td className={`status-${o.status}`} data-testid="order-status">
              {o.status}
            </td>
            <td>{o.waitingFor ?? ''}</td>
            <td>{o.cancellationReason ?? ''}</td>
            <td className="num">{money(o.total, o.currency)}</td>
            <td>{dateTime(o.createdAt, zone)}</td>
            <td>{o.status === 'PENDING' ? dateTime(o.deadlineAt, zone) : ''}</td>
          </tr>
        ))}
      </tbody>
    </table>
  )
}
