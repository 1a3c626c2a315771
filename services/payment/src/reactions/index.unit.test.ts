import { describeSagaReactions } from '@saga/service-kit/testing'
import { paymentReactions } from './index.js'

describeSagaReactions('payment', paymentReactions)
