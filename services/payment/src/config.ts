import { parseEnv, serviceEnvSchema, type Environment } from '@saga/service-kit'
import type { z } from 'zod'

/** The payment service's environment: the fleet's shared variables (README) plus its own. */
export const Env = serviceEnvSchema({ service: 'payment', port: 3002 })

/** The parsed configuration of the payment service. */
export type Config = z.output<typeof Env>

/**
 * Parses the environment once, at start.
 * @throws EnvError naming every bad variable
 */
export const loadConfig = (env: Environment): Config => parseEnv(Env, env)
