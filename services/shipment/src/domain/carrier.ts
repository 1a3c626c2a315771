/**
 * The simulated carrier: deterministic, documented rules, no I/O (services/shipment/README.md, "The simulated carrier").
 * The same order always gets the same decision and the same tracking number, so retries and
 * tests are repeatable.
 */
import { createHash } from 'node:crypto'

/** The carrier's name as it appears on shipments and in ShipmentCreated. */
export const CARRIER_NAME = 'saga-parcel'

/**
 * ISO 3166-1 alpha-2 codes the simulated carrier delivers to. Anything else (e.g. "AQ",
 * Antarctica) fails the shipment with `unsupported_country`.
 */
export const SUPPORTED_COUNTRIES: ReadonlySet<string> = new Set([
  'AT', 'AU', 'BE', 'CA', 'CH', 'CZ', 'DE', 'DK', 'EE', 'ES', 'FI', 'FR', 'GB', 'GR', 'HU', 'IE', 'IS', 'IT',
  'JP', 'LT', 'LU', 'LV', 'NL', 'NO', 'NZ', 'PL', 'PT', 'RO', 'SE', 'SG', 'SI', 'SK', 'US',
]) // prettier-ignore

/** Where the parcel goes; only the country decides, the rest is carried for the label. */
export interface ShippingAddress {
  name: string
  line1: string
  city: string
  postalCode: string
  country: string
}

/** What the carrier is asked to ship: the order and where to. */
export interface ShipmentRequest {
  orderId: string
  address: ShippingAddress
}

/** Why the carrier refused a shipment. */
export type ShipmentFailureReason = 'unsupported_country'

/**
 * The carrier's answer.
 * - `booked`: the carrier and the tracking number (`SP` + 12 upper-case hex digits derived from the
 *   account and the order id, so a redelivery books the same number).
 * - `refused`: the reason and a sentence for people.
 */
export type BookingOutcome =
  | { kind: 'booked'; carrier: string; trackingNumber: string }
  | { kind: 'refused'; reason: ShipmentFailureReason; detail: string }

/**
 * Books a shipment with the simulated carrier.
 *
 * @param request the order id and the address (country: ISO 3166-1 alpha-2)
 * @param carrierAccount the account the carrier bills (`CARRIER_ACCOUNT`); non-empty
 * @throws Error when `carrierAccount` is empty (a missing setting is the caller's to report)
 */
export function bookShipment(request: ShipmentRequest, carrierAccount: string): BookingOutcome {
  if (carrierAccount === '') throw new Error('bookShipment needs a carrier account')
  const country = request.address.country
  if (!SUPPORTED_COUNTRIES.has(country)) {
    return {
      kind: 'refused',
      reason: 'unsupported_country',
      detail: `carrier ${CARRIER_NAME} does not deliver to country ${country}`,
    }
  }
  return {
    kind: 'booked',
    carrier: CARRIER_NAME,
    trackingNumber: trackingNumberFor(request.orderId, carrierAccount),
  }
}

/** `SP` + the first 12 hex digits of sha256(account:orderId), upper case. */
export function trackingNumberFor(orderId: string, carrierAccount: string): string {
  const digest = createHash('sha256').update(`${carrierAccount}:${orderId}`).digest('hex')
  return `SP${digest.slice(0, 12).toUpperCase()}`
}
