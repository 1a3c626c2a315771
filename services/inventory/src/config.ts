import { parseEnv, serviceEnvSchema, type Environment } from '@saga/service-kit'
import { z } from 'zod'

/** The inventory service's environment: the fleet's shared variables (docs/operations.md) plus its own. */
export const Env = serviceEnvSchema({ service: 'inventory', port: 3003 }).extend({
  /** Fill the catalogue with demo stock at start (`npm start` sets true). */
  SEED_CATALOGUE: z.stringbool().default(false),
})

/** The parsed configuration of the inventory service. */
export type Config = z.output<typeof Env>

/**
 * Parses the environment once, at start.
 * @throws EnvError naming every bad variable
 */
export const loadConfig = (env: Environment): Config => parseEnv(Env, env)
