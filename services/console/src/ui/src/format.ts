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

/** An ISO time as the local `HH:MM:SS.mmm`; null as an en dash. */
export function clock(iso: string | null | undefined): string {
  if (iso === null || iso === undefined) return '–'
  const date = new Date(iso)
  if (Number.isNaN(date.getTime())) return iso
  const pad = (n: number, width = 2) => String(n).padStart(width, '0')
  return `${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}.${pad(date.getMilliseconds(), 3)}`
}

/** An ISO time as the local `HH:MM:SS`; null as an en dash. */
export function timeOfDay(iso: string | null | undefined): string {
  const full = clock(iso)
  return /^\d\d:\d\d:\d\d\.\d{3}$/.test(full) ? full.slice(0, 8) : full
}

/** An ISO time as local date and time, to the second. */
export function dateTime(iso: string | null | undefined): string {
  if (iso === null || iso === undefined) return '–'
  const date = new Date(iso)
  return Number.isNaN(date.getTime()) ? iso : date.toLocaleString()
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
