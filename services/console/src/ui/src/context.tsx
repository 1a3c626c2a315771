import { createContext, useContext } from 'react'
import type { SessionView } from './api.js'
import type { Zone } from './format.js'

/** What every page shares: the session, and the one error banner. */
export interface ConsoleContext {
  session: SessionView
  /** False until the first `GET /api/session` has answered; until then `session` is signed out. */
  sessionKnown: boolean
  refreshSession: () => void
  /** Shows `message` in the error banner (null clears it). */
  reportError: (message: string | null) => void
  /** The zone every time on the page is shown in (the header's toggle; kept in the browser). */
  zone: Zone
  setZone: (zone: Zone) => void
}

/** The session before `GET /api/session` has answered, or without one: signed out, nothing enabled. */
export const SIGNED_OUT: SessionView = {
  signedIn: false,
  actor: null,
  role: null,
  writesEnabled: false,
  signInEnabled: false,
  readsNeedSignIn: false,
}

/** The React context holding the `ConsoleContext`; `App` provides it. */
export const Console = createContext<ConsoleContext>({
  session: SIGNED_OUT,
  sessionKnown: false,
  refreshSession: () => undefined,
  reportError: () => undefined,
  zone: 'local',
  setZone: () => undefined,
})

/** The console's shared state (see `ConsoleContext`). */
export const useConsole = (): ConsoleContext => useContext(Console)

/** The message of a failed call, for the banner. */
export const errorMessage = (error: unknown): string =>
  error instanceof Error ? error.message : String(error)

/** Whether the signed-in person may act: an operator, on a console with ADMIN_TOKEN (a viewer only reads). */
export const canAct = (session: SessionView): boolean =>
  session.signedIn && session.role === 'operator' && session.writesEnabled
