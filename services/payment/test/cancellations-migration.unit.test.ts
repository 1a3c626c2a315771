import { describeCancellationsMigration } from '@saga/testkit'

describeCancellationsMigration('payment', import.meta.url)
