import { parseEnv, serviceEnvSchema, type Environment } from '@saga/service-kit'
import { z } from 'zod'

/** The shipment service's environment: the fleet's shared variables (docs/operations.md) plus its own. */
export const Env = serviceEnvSchema({ service: 'shipment', port: 3004 }).extend({
  /**
   * The simulated carrier's account. Empty means missing: the service still boots, but creating a
   * shipment throws a transient error, so messages are retried until it is set and the service restarted.
   */
  CARRIER_ACCOUNT: z.string().default('demo-carrier'),
})

/** The parsed configuration of the shipment service. */
export type Config = z.output<typeof Env>

/**
 * Parses the environment once, at start.
 * @throws EnvError naming every bad variable
 */
export const loadConfig = (env: Environment): Config => parseEnv(Env, env)
