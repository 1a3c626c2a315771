/**
 * The console's API as the pages call it. Types are the server's own (type-only imports, erased
 * from the bundle), so a change of shape fails the UI's typecheck.
 */
import type {
  ActionAnswer,
  ActionRequest,
  ActionsPage,
  FleetSnapshot,
  OrderDetail,
  OrderPage,
  SessionView,
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

async function call<T>(path: string, init?: RequestInit): Promise<T> {
  const response = await fetch(path, { credentials: 'same-origin', ...init })
  const text = await response.text()
  const body: unknown = text === '' ? undefined : JSON.parse(text)
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

export const api = {
  fleet: () => call<FleetSnapshot>('/api/fleet'),
  orders: (query: URLSearchParams) =>
    call<OrderPage>(`/api/orders${query.size > 0 ? `?${query.toString()}` : ''}`),
  order: (id: string) => call<OrderDetail>(`/api/orders/${encodeURIComponent(id)}`),
  actions: () => call<ActionsPage>('/api/actions'),
  act: (body: ActionRequest) => call<ActionAnswer>('/api/actions', write('POST', body)),
  session: () => call<SessionView>('/api/session'),
  signIn: (actor: string, token: string) =>
    call<SessionView>('/api/session', write('POST', { actor, token })),
  signOut: () => call<SessionView>('/api/session', write('DELETE')),
}
