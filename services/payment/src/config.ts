import { parseEnv, serviceEnvSchema, type Environment } from '@saga/service-kit'
import { z } from 'zod'
import { DEFAULT_SLOW_TOKEN_DELAY_MS } from './domain/provider.js'

/** The payment service's environment: the fleet's shared variables (docs/operations.md) plus its own. */
export const Env = serviceEnvSchema({ service: 'payment', port: 3002 })
  .extend({
    /**
     * How long the simulated provider takes to answer a `tok_slow` charge, ms (default 10 s). The
     * handler waits inside its inbox transaction, so the delay must stay below
     * DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_MS (when that is set), or the server would end the session.
     */
    PAYMENT_SLOW_TOKEN_DELAY_MS: z.coerce
      .number()
      .int()
      .nonnegative()
      .max(60_000)
      .default(DEFAULT_SLOW_TOKEN_DELAY_MS),
  })
  .superRefine((env, ctx) => {
    const idle = env.DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_MS
    if (idle > 0 && env.PAYMENT_SLOW_TOKEN_DELAY_MS >= idle - 1_000)
      ctx.addIssue({
        code: 'custom',
        path: ['PAYMENT_SLOW_TOKEN_DELAY_MS'],
        message: `must stay at least 1000 ms below DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_MS (${idle})`,
        input: env.PAYMENT_SLOW_TOKEN_DELAY_MS,
      })
  })

/** The parsed configuration of the payment service. */
export type Config = z.output<typeof Env>

/**
 * Parses the environment once, at start.
 * @throws EnvError naming every bad variable
 */
export const loadConfig = (env: Environment): Config => parseEnv(Env, env)
