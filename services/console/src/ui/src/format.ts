/** `1.2 s`, `340 ms`, `3 min 4 s`, `2 h 5 min`; null as an en dash. */
export function duration(ms: number | null | undefined): string {
  if (ms === null || ms === undefined || Number.isNaN(ms)) return '–'
  const sign = ms < 0 ? '-' : ''
  const abs = Math.abs(ms)
  if (abs < 1_000) return `${sign}${Math.round(abs)} ms`
  if (abs < 60_000) return `${sign}${(abs / 1_000).toFixed(1)} s`
  if (abs < 3_600_000) return `${sign}${Math.floor(abs / 60_000)} min ${Math.round((abs % 60_000) / 1_000)} s`
  return `${sign}${Math.floor(abs / 3_600_000)} h ${Math.round((abs % 3_600_000) / 60_000)} min`
}

/**
 * The zone every time of the page is shown in: the browser's own (`local`) or UTC. One choice for the
 * whole page (the header's toggle), so two times on one page are always comparable.
 */
export type Zone = 'local' | 'utc'

/** A time's parts in a zone, each zero-padded, and the zone's short name (`EST`, `GMT+1`, `UTC`). */
interface Parts {
  date: string
  time: string
  ms: string
  zone: string
}

const formatters = new Map<Zone, Intl.DateTimeFormat>()

/** One formatter per zone (they are costly to make): 24-hour, numeric, with the zone's short name. */
function formatterOf(zone: Zone): Intl.DateTimeFormat {
  let formatter = formatters.get(zone)
  if (formatter === undefined) {
    formatter = new Intl.DateTimeFormat('en-US', {
      timeZone: zone === 'utc' ? 'UTC' : undefined,
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
      hourCycle: 'h23',
      timeZoneName: 'short',
    })
    formatters.set(zone, formatter)
  }
  return formatter
}

/** The parts of an ISO time in `zone`, or null when it is missing or not a time. */
function partsOf(iso: string | null | undefined, zone: Zone): Parts | null {
  if (iso === null || iso === undefined) return null
  const date = new Date(iso)
  if (Number.isNaN(date.getTime())) return null
  const part: Record<string, string> = {}
  for (const p of formatterOf(zone).formatToParts(date)) part[p.type] = p.value
  return {
    date: `${part.year}-${part.month}-${part.day}`,
    time: `${part.hour}:${part.minute}:${part.second}`,
    ms: String(date.getUTCMilliseconds()).padStart(3, '0'),
    zone: part.timeZoneName ?? (zone === 'utc' ? 'UTC' : ''),
  }
}

/**
 * The short name of `zone` at `at` (`EST`, `GMT+1`, `UTC`): what the page names beside its times. A
 * local zone's name depends on the date (summer time), hence `at`.
 */
export function zoneName(zone: Zone, at: Date = new Date()): string {
  return partsOf(at.toISOString(), zone)?.zone ?? 'UTC'
}

/** An ISO time as `YYYY-MM-DD HH:MM:SS ZONE` in `zone`; null as an en dash, a non-time as it is. */
export function dateTime(iso: string | null | undefined, zone: Zone): string {
  const parts = partsOf(iso, zone)
  if (parts === null) return iso ?? '–'
  return `${parts.date} ${parts.time} ${parts.zone}`
}

/** An ISO time as `HH:MM:SS.mmm` in `zone`, for hops (the zone is named by the page); null as an en dash. */
export function clock(iso: string | null | undefined, zone: Zone): string {
  const parts = partsOf(iso, zone)
  return parts === null ? (iso ?? '–') : `${parts.time}.${parts.ms}`
}

/** An ISO time as `HH:MM:SS` in `zone` (the zone is named by the page); null as an en dash. */
export function timeOfDay(iso: string | null | undefined, zone: Zone): string {
  const parts = partsOf(iso, zone)
  return parts === null ? (iso ?? '–') : parts.time
}

/**
 * ms from a fact's commit (`committedAt`, its outbox row's time) to `at` (a publish or a consumer's
 * receipt), never negative: nothing can see a fact before its transaction committed, so a negative
 * difference is only the clocks of two databases disagreeing, shown as 0. Null when either is missing.
 * Measured from the commit, not from the publish: with publish on commit a consumer may record a
 * fact before the relay marks its row published.
 */
export function sinceCommit(
  committedAt: string | null | undefined,
  at: string | null | undefined,
): number | null {
  const ms = between(committedAt, at)
  return ms === null ? null : Math.max(0, ms)
}

/** ms from `from` to `to` (ISO), or null when either is missing. */
export function between(from: string | null | undefined, to: string | null | undefined): number | null {
  if (!from || !to) return null
  return Date.parse(to) - Date.parse(from)
}

/** `payment.processed` -> `PaymentProcessed` (the event's name, as the contracts spell it). */
export function eventName(routingKey: string): string {
  return routingKey
    .split(/[.-]/)
    .map((word) => word.charAt(0).toUpperCase() + word.slice(1))
    .join('')
}

/**
 * A fact's name from its versioned type, as the contracts name each version (`eventNameOf`):
 * `payment.processed.v1` -> `PaymentProcessed`, `order.created.v2` -> `OrderCreatedV2`; a type
 * without a version suffix is named like its routing key. So two versions of one event read apart.
 */
export function factName(type: string): string {
  const version = /\.v(\d+)$/.exec(type)?.[1]
  const name = eventName(type.replace(/\.v\d+$/, ''))
  return version === undefined || version === '1' ? name : `${name}V${version}`
}

/** The first 8 characters of a UUID, for tight columns (the full id is in the title). */
export const shortId = (id: string): string => id.slice(0, 8)

/** Minor units as `12.00 EUR`. */
export const money = (total: number, currency: string): string => `${(total / 100).toFixed(2)} ${currency}`

/**
 * A `datetime-local` input's value (`YYYY-MM-DDTHH:MM`, no zone) as ISO 8601 UTC, read in `zone`:
 * the page's zone, so a filter means the times the page shows. '' when empty or not a time.
 */
export function inputToIso(value: string, zone: Zone): string {
  if (value === '') return ''
  const date = new Date(zone === 'utc' ? `${value}Z` : value)
  return Number.isNaN(date.getTime()) ? '' : date.toISOString()
}

/** An ISO time as a `datetime-local` input's value in `zone` (minutes); '' when missing or not a time. */
export function isoToInput(iso: string | null | undefined, zone: Zone): string {
  if (!iso) return ''
  const date = new Date(iso)
  if (Number.isNaN(date.getTime())) return ''
  const shift = zone === 'utc' ? 0 : date.getTimezoneOffset() * 60_000
  return new Date(date.getTime() - shift).toISOString().slice(0, 16)
}
