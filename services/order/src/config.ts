import { parseEnv, serviceEnvSchema, type Environment } from '@saga/service-kit'
import { z } from 'zod'
import { DEFAULT_ORDER_DEADLINE_MS, type OrderCreatedVersion } from './domain/order.js'

/** The order service's environment: the fleet's shared variables (docs/operations.md) plus its own. */
export const Env = serviceEnvSchema({ service: 'order', port: 3001 }).extend({
  /**
   * How long an order may stay PENDING, in ms from its creation (database clock): then the deadline
   * scheduler cancels it with reason `deadline_exceeded`. Default 10 minutes; at most 7 days.
   */
  ORDER_DEADLINE_MS: z.coerce
    .number()
    .int()
    .positive()
    .max(7 * 24 * 3_600_000)
    .default(DEFAULT_ORDER_DEADLINE_MS),
  /**
   * Which version of OrderCreated a new order is announced with: `1` (`order.created.v1`, the
   * default, what every consumer reads today) or `2` (`order.created.v2`). Move it to 2 only once
   * every consumer of `order.created` reads v2 (docs/architecture.md, "Changing an event"); back to
   * 1 is the rollback. Anything else stops the service at start.
   */
  ORDER_CREATED_VERSION: z
    .enum(['1', '2'], {
      error: 'must be 1 or 2: the version of order.created new orders are announced with',
    })
    .default('1')
    .transform((version): OrderCreatedVersion => (version === '1' ? 1 : 2)),
})

/** The parsed configuration of the order service. */
export type Config = z.output<typeof Env>

/**
 * Parses the environment once, at start.
 * @throws EnvError naming every bad variable
 */
export const loadConfig = (env: Environment): Config => parseEnv(Env, env)
