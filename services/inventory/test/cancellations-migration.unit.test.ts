import { describeCancellationsMigration } from '@saga/testkit'

describeCancellationsMigration('inventory', import.meta.url)
