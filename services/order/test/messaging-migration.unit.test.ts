import { describeMessagingMigration } from '@saga/testkit'

describeMessagingMigration('order', import.meta.url)
