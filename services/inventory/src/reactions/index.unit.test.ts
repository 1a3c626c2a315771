import { describeSagaReactions } from '@saga/service-kit/testing'
import { inventoryReactions } from './index.js'

describeSagaReactions('inventory', inventoryReactions)
