/** How the running SDK is flushed and stopped; set by sdk.ts, absent when telemetry is off. */
let stop: (() => Promise<void>) | undefined

/** Called by sdk.ts once the SDK started. */
export function onTelemetryShutdown(fn: () => Promise<void>): void {
  stop = fn
}

/**
 * Flushes the spans still buffered and stops the SDK; a no-op when telemetry is off. Never
 * rejects: an exporter that is down costs the spans it could not take, not the shutdown.
 * `runServer` calls it after the app closed, so the spans of the drained handlers go out too.
 */
export async function shutdownTelemetry(): Promise<void> {
  const current = stop
  stop = undefined
  await current?.().catch(() => undefined)
}
