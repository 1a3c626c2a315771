/**
 * @saga/service-kit/testing: the fixtures and suites the services' tests share, over testkit and
 * vitest (both available to every test of the workspace; service-kit lists testkit among its
 * development dependencies). Not for production code.
 */
export { createServiceTestDatabase, useServiceTestDatabase, type ServiceTestDatabase } from './database.js'
export { useServiceTimeZones } from './time-zone.js'
export { useRouteApp } from './route-app.js'
export { describeSagaReactions, type RegisteredHandler, type RegisteredRecorder } from './reactions.js'
export {
  orderCancelled,
  outboxOfType,
  sampleAddress,
  sampleLines,
  shipmentFailed,
  stockReservationFailed,
} from './facts.js'
