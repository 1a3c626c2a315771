import { AMQP_URL_RULE, POSTGRES_URL_RULE, urlSettingProblems } from '@saga/service-kit/url-setting'

/**
 * Exits with code 1 and one line per bad variable when POSTGRES_URL or AMQP_URL is set but not a
 * PostgreSQL or AMQP URL (wrong scheme, a port that is not 1-65535, a bad `sslmode`, not a URL),
 * before anything connects or tries to start a server. The lines never quote the value: it may
 * hold a password (`urlSettingProblem`).
 */
export function exitOnBadUrlSettings(env: NodeJS.ProcessEnv = process.env): void {
  const problems = urlSettingProblems(env, { POSTGRES_URL: POSTGRES_URL_RULE, AMQP_URL: AMQP_URL_RULE })
  if (problems.length === 0) return
  console.error(`Invalid environment:\n${problems.map((line) => `  ${line}`).join('\n')}`)
  process.exit(1)
}
