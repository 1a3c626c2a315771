import type { ServiceName } from '@saga/contracts'

/** The local database URL of a service: role = database = password = `<service>_service`. */
export const localDatabaseUrl = (service: ServiceName): string =>
  `postgresql://${service}_service:${service}_service@127.0.0.1:5432/${service}_service`
