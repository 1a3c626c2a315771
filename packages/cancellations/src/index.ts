export {
  CANCELLED_ORDER_TABLE,
  cancellationRegister,
  ORDER_IS_CANCELLED_SQL,
  stepStateQuery,
  undoWhenOrderCancelled,
  type Cancellation,
  type CancellationRegister,
  type StepState,
} from './register.js'
