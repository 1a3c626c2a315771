import { describeSagaReactions } from '@saga/service-kit/testing'
import { shipmentReactions } from './index.js'

describeSagaReactions('shipment', (deps) => shipmentReactions(deps, 'acct'))
