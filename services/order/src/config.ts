import { parseEnv, serviceEnvSchema, type Environment } from '@saga/service-kit'
import type { z } from 'zod'

/** The order service's environment: the fleet's shared variables (README) plus its own. */
export const Env = serviceEnvSchema({ service: 'order', port: 3001 })

/** The parsed configuration of the order service. */
export type Config = z.output<typeof Env>

/**
 * Parses the environment once, at start.
 * @throws EnvError naming every bad variable
 */
export const loadConfig = (env: Environment): Config => parseEnv(Env, env)
