/**
 * The entry point of `node --import @saga/service-kit/telemetry services/<name>/dist/server.js`:
 * starts the OpenTelemetry SDK before the app is loaded when an OTLP endpoint is configured
 * (`telemetryEnabled`), and loads nothing else otherwise, so a service without an endpoint runs
 * exactly as it would without the flag.
 */
import { telemetryEnabled } from './settings.js'

if (telemetryEnabled(process.env)) {
  const { startTelemetry } = await import('./sdk.js')
  startTelemetry()
}
