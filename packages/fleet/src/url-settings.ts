import { AMQP_URL_RULE, POSTGRES_URL_RULE, urlSettingProblems } from '@saga/service-kit/url-setting'

/**
 * Exits with code 1 and one line per bad variable when POSTGRES_URL or AMQP_URL is set but not a
 * PostgreSQL or AMQP URL (wrong scheme, a port that is not 1-65535, a bad `sslmode`, not a URL),
 * before anything connects or tries to start a server. The lines never quote the value: it may
 * hold a password (`urlSettingProblem`).
 */
export function exitOnBadUrlSettings(env: NodeJS.ProcessEnv = process.env): void {
  // One broker: npm start and bootstrap make users and a vhost on it and hand the services URLs
  // derived from it, so a list of cluster nodes (which the services' own AMQP_URL takes) is refused.
  const amqp = { ...AMQP_URL_RULE, list: false }
  const problems = urlSettingProblems(env, { POSTGRES_URL: POSTGRES_URL_RULE, AMQP_URL: amqp })
  if (problems.length === 0) return
  console.error(`Invalid environment:\n${problems.map((line) => `  ${line}`).join('\n')}`)
  process.exit(1)
}
