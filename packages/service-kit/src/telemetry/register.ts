/**
 * The entry point of `node --import @saga/service-kit/telemetry services/<name>/dist/server.js`:
 * starts the OpenTelemetry SDK before the app is loaded when an OTLP endpoint is configured
 * (`telemetryEnabled`), and loads nothing else otherwise, so a service without an endpoint runs
 * exactly as it would without the flag. A malformed endpoint exits with code 1 naming the variable
 * and the fault (`telemetryProblems`).
 */
import { telemetryEnabled, telemetryProblems } from './settings.js'

const problems = telemetryProblems(process.env)
if (problems.length > 0) {
  process.stderr.write(`Invalid environment:\n${problems.map((line) => `  ${line}`).join('\n')}\n`)
  process.exit(1)
}
if (telemetryEnabled(process.env)) {
  const { startTelemetry } = await import('./sdk.js')
  startTelemetry()
}
