/**
 * The console's API as the pages call it. Types are the server's own (type-only imports, erased
 * from the bundle), so a change of shape fails the UI's typecheck.
 */
import type {
  ActionAnswer,
  ActionRequest,
  ActionsPage,
  BulkPreview,
  BulkProgress,
  BulkRequest,
  FleetSnapshot,
  OrderDetail,
  OrderedKeysPage,
  OrderPage,
  SearchAnswer,
  SessionView,
  SkipAnswer,
  SkipRequest,
} from '../../api-types.js'

export type * from '../../api-types.js'

/** A failed API call: the status and the error shape's message. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message)
    this.name = 'ApiError'
  }
}

/** The body as JSON, or undefined when it is empty or not JSON (a proxy's HTML error page). */
function parseBody(text: string): unknown {
  try {
    return text === '' ? undefined : JSON.parse(text)
  } catch {
    return undefined
  }
}

/** Calls the console's API: the JSON body of a 2xx, else an ApiError with the error shape's message. */
async function call<T>(path: string, init?: RequestInit): Promise<T> {
  const response = await fetch(path, { credentials: 'same-origin', ...init })
  const body = parseBody(await response.text())
  if (!response.ok) {
    const message = (body as { message?: unknown } | undefined)?.message
    throw new ApiError(response.status, typeof message === 'string' ? message : `HTTP ${response.status}`)
  }
  return body as T
}

/** A write as the server requires it: JSON body (the page's own origin is added by the browser). */
const write = (method: string, body?: unknown): RequestInit => ({
  method,
  headers: body === undefined ? {} : { 'content-type': 'application/json' },
  body: body === undefined ? undefined : JSON.stringify(body),
})

/**
 * The console's API, one function per route; each resolves to the route's JSON body.
 * @throws ApiError with the status and the error shape's message on any non-2xx answer
 */
export const api = {
  fleet: () => call<FleetSnapshot>('/api/fleet'),
  orders: (query: URLSearchParams) =>
    call<OrderPage>(`/api/orders${query.size > 0 ? `?${query.toString()}` : ''}`),
  order: (id: string) => call<OrderDetail>(`/api/orders/${encodeURIComponent(id)}`),
  search: (text: string) => call<SearchAnswer>(`/api/search?q=${encodeURIComponent(text)}`),
  actions: () => call<ActionsPage>('/api/actions'),
  act: (body: ActionRequest) => call<ActionAnswer>('/api/actions', write('POST', body)),
  orderedKeys: () => call<OrderedKeysPage>('/api/ordered-keys'),
  skipOrdered: (body: SkipRequest) => call<SkipAnswer>('/api/ordered-keys/skip', write('POST', body)),
  bulkPreview: (body: BulkRequest) =>
    call<BulkPreview>('/api/bulk', write('POST', { ...body, dryRun: true })),
  bulkStart: (body: BulkRequest) =>
    call<BulkProgress>('/api/bulk', write('POST', { ...body, dryRun: false })),
  bulkProgress: (id: string) => call<BulkProgress>(`/api/bulk/${encodeURIComponent(id)}`),
  bulkStop: (id: string) => call<BulkProgress>(`/api/bulk/${encodeURIComponent(id)}/stop`, write('POST', {})),
  session: () => call<SessionView>('/api/session'),
  signIn: (actor: string, token: string) =>
    call<SessionView>('/api/session', write('POST', { actor, token })),
  signOut: () => call<SessionView>('/api/session', write('DELETE')),
}
