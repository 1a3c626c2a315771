import type { DeadLetter, OutboxRecord } from '@saga/messaging-admin'
import { noAnswerReason } from './http.js'
import { SERVICES, type CliSettings, type ServiceName } from './settings.js'

/** Who the CLI says acts, in `x-admin-actor` (recorded with each write). */
const ACTOR = 'order-cli'

/** A service's answer: its status and JSON body (`{}` when it has none). */
export interface AdminAnswer<T> {
  status: number
  body: T & { message?: string }
}

/** Thrown when a service gives no HTTP answer; its message names the service, its URL and the cause. */
export class ServiceUnreachable extends Error {
  constructor(service: ServiceName, url: string, reason: string) {
    super(`the ${service} service at ${url} did not answer (${reason}); is the fleet running (npm start)?`)
    this.name = 'ServiceUnreachable'
  }
}

/**
 * Calls `/admin/messaging<path>` of `service` (its URL from the settings): a GET, or with `body` a
 * POST as JSON carrying `Authorization: Bearer <ADMIN_TOKEN>` when the CLI has one. Any HTTP answer
 * is returned for the caller to judge.
 * @throws ServiceUnreachable when there is no answer within `timeoutMs`
 */
export async function callAdmin<T>(
  settings: CliSettings,
  service: ServiceName,
  path: string,
  body?: unknown,
  timeoutMs = 15_000,
): Promise<AdminAnswer<T>> {
  const url = settings.services[service].url
  const headers: Record<string, string> = {}
  if (body !== undefined) {
    headers['content-type'] = 'application/json'
    headers['x-admin-actor'] = ACTOR
    if (settings.adminToken) headers.authorization = `Bearer ${settings.adminToken}`
  }
  let res: Response
  try {
    res = await fetch(`${url}/admin/messaging${path}`, {
      method: body === undefined ? 'GET' : 'POST',
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(timeoutMs),
    })
  } catch (error) {
    throw new ServiceUnreachable(service, url, noAnswerReason(error, timeoutMs))
  }
  const text = await res.text()
  try {
    return { status: res.status, body: JSON.parse(text) as AdminAnswer<T>['body'] }
  } catch {
    return { status: res.status, body: { message: text } as AdminAnswer<T>['body'] }
  }
}

/** A dead letter as the CLI lists it: where it lies too. */
export interface FleetDeadLetter extends DeadLetter {
  service: ServiceName
  /** The dead-letter queue. */
  queue: string
}

/** What a fleet-wide read found, and the services that could not say. */
export interface FleetRead<T> {
  found: T[]
  failed: { service: ServiceName; error: string }[]
}

/**
 * Reads `path` of every service's admin surface and collects `pick(body)`; a service that does
 * not answer, or answers with an error, is in `failed` rather than failing the command: the tool
 * is for diagnosing a broken fleet.
 */
async function readFleet<B, T>(
  settings: CliSettings,
  path: string,
  pick: (service: ServiceName, body: B) => T[],
): Promise<FleetRead<T>> {
  const found: T[] = []
  const failed: FleetRead<T>['failed'] = []
  for (const service of SERVICES) {
    try {
      const { status, body } = await callAdmin<B>(settings, service, path)
      if (status === 200) found.push(...pick(service, body))
      else failed.push({ service, error: `answered ${status}: ${body.message ?? ''}` })
    } catch (error) {
      failed.push({ service, error: error instanceof Error ? error.message : String(error) })
    }
  }
  return { found, failed }
}

/** The dead letters of the fleet's handlers (GET dead-letters of each service), of `aggregateId` only when given. */
export function fleetDeadLetters(
  settings: CliSettings,
  aggregateId?: string,
): Promise<FleetRead<FleetDeadLetter>> {
  const query = aggregateId ? `&aggregateId=${encodeURIComponent(aggregateId)}` : ''
  return readFleet<{ queues: { queue: string; messages: DeadLetter[] }[] }, FleetDeadLetter>(
    settings,
    `/dead-letters?limit=1000${query}`,
    (service, body) =>
      body.queues.flatMap(({ queue, messages }) => messages.map((m) => ({ ...m, service, queue }))),
  )
}

/** The parked outbox rows of the four services (GET parked of each), oldest parked first per service. */
export function fleetParkedRows(
  settings: CliSettings,
): Promise<FleetRead<OutboxRecord & { service: ServiceName }>> {
  return readFleet<{ rows: OutboxRecord[] }, OutboxRecord & { service: ServiceName }>(
    settings,
    '/parked?limit=1000',
    (service, body) => body.rows.map((row) => ({ ...row, service })),
  )
}
