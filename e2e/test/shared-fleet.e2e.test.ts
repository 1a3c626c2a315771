import { describe } from 'vitest'
import { useScenario } from '../src/scenario.js'
import { businessStories } from './scenarios/business-stories.js'
import { sagaConsole } from './scenarios/console.js'
import { duplicateMessages } from './scenarios/duplicates.js'
import { poisonMessages } from './scenarios/poison.js'

/**
 * The scenarios that leave the fleet whole share one fleet and one ledger, one after another: each
 * settles what it started and checks every invariant over all the orders so far, and its own
 * orders' outcome apart. Poison comes after the stories (its CLI listing counts the fleet's dead
 * letters); the console comes last (it restarts shipment without its carrier account and with it).
 */
describe('one fleet for the scenarios that leave it whole', () => {
  const s = useScenario('shared fleet (scenarios 1, 5, 6 and the console)')
  businessStories(s)
  duplicateMessages(s)
  poisonMessages(s)
  sagaConsole(s)
})
