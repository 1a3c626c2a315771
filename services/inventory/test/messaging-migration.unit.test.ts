import { describeMessagingMigration } from '@saga/testkit'

describeMessagingMigration('inventory', import.meta.url)
