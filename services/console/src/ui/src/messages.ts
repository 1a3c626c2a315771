/**
 * The sentences the UI shows for what went wrong: pure functions of the API's answers, so each
 * page says a thing once and in the same words.
 */
import type { ErrorDetail } from './api.js'

/** What the order page says after a read of the order failed. */
export interface OrderReadFailure {
  /** The text in place of the order, while there is no order to show. */
  page: string
  /** The error banner's text (null: the page says it all). */
  banner: string | null
}

/**
 * What the order page says when `GET /api/orders/:id` failed with `status` (null when no answer)
 * and `message`. An unknown order (404) is said once, on the page, and nothing is loading any more;
 * any other failure goes to the banner, naming the order unless the message already does, and the
 * page, when it has no order to show, says only that it could not be read.
 */
export function orderReadFailure(id: string, status: number | null, message: string): OrderReadFailure {
  if (status === 404) return { page: `Order ${id} not found.`, banner: null }
  return {
    page: `Order ${id} could not be read.`,
    banner: message.includes(id) ? message : `Order ${id}: ${message}`,
  }
}

/**
 * The note of one action outcome: the service's message and, when it refused fields, each
 * `path: issue` (`The request is invalid (params.id: Invalid UUID)`); empty when there is neither.
 */
export function outcomeNote(message: string | null | undefined, details: ErrorDetail[] = []): string {
  const why = details.map((d) => `${d.path}: ${d.issue}`).join('; ')
  if (why === '') return message ?? ''
  return message ? `${message} (${why})` : why
}
