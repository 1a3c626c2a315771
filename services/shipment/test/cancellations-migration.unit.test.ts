import { describeCancellationsMigration } from '@saga/testkit'

describeCancellationsMigration('shipment', import.meta.url)
