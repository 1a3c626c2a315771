import { describeSagaReactions } from '@saga/service-kit/testing'
import { orderReactions, timelineRecorder } from './index.js'

describeSagaReactions('order', orderReactions, timelineRecorder)
