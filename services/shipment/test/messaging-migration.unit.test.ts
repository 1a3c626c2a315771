import { describeMessagingMigration } from '@saga/testkit'

describeMessagingMigration('shipment', import.meta.url)
