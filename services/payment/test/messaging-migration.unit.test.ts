import { describeMessagingMigration } from '@saga/testkit'

describeMessagingMigration('payment', import.meta.url)
