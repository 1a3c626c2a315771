import { describe } from 'vitest'
import { useScenario } from '../src/scenario.js'
import { customerCancels } from './scenarios/customer-cancel.js'
import { scaleOut } from './scenarios/scale-out.js'

/** Two instances of every service, for the two scenarios of 200 orders, one after the other. */
describe('one fleet of two instances of every service', () => {
  const s = useScenario('two instances x 4 services (scenarios 2 and 10)', {
    instances: { order: 2, payment: 2, inventory: 2, shipment: 2 },
  })
  scaleOut(s)
  customerCancels(s)
})
