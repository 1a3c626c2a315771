export {
  CANCELLED_ORDER_TABLE,
  cancellationRegister,
  ORDER_IS_CANCELLED_SQL,
  undoWhenOrderCancelled,
  type Cancellation,
  type CancellationRegister,
} from './register.js'
