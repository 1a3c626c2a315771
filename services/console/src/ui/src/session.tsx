import { useState, type FormEvent } from 'react'
import { api } from './api.js'
import { errorMessage, useConsole } from './context.js'

/** The signed-in header: who, as which role, and the sign-out button. */
function SignedIn() {
  const { session, refreshSession, reportError } = useConsole()
  return (
    <span>
      <span data-testid="session-actor">{session.actor}</span>{' '}
      <span
        className={`role role-${session.role ?? 'none'}`}
        data-testid="session-role"
        data-role={session.role ?? ''}
        title={session.role === 'viewer' ? 'Viewers read; operators act' : 'Operators read and act'}
      >
        {session.role}
      </span>{' '}
      <button
        data-testid="sign-out"
        onClick={() => {
          api
            .signOut()
            .then(refreshSession)
            .catch((error: unknown) => reportError(errorMessage(error)))
        }}
      >
        Sign out
      </button>
    </span>
  )
}

/**
 * Sign-in: the actor's name and a token (the operator's ADMIN_TOKEN to act, the viewer's
 * CONSOLE_VIEWER_TOKEN to read under a name), sent once to `POST /api/session`; the browser keeps only
 * the HttpOnly session cookie. Signed in: the actor, the role and a sign-out button. Without either
 * token on the server: a read-only note. Until the server has said which, nothing, so a console
 * with writes never flashes "read-only" and a test can wait for the form.
 */
export function SessionBox() {
  const { session, sessionKnown, refreshSession, reportError } = useConsole()
  const [actor, setActor] = useState('')
  const [token, setToken] = useState('')
  const [busy, setBusy] = useState(false)

  if (!sessionKnown) return <span data-testid="session-pending" aria-busy="true" />
  if (!session.signInEnabled)
    return (
      <span
        data-testid="read-only"
        title="The console was started without ADMIN_TOKEN or CONSOLE_VIEWER_TOKEN"
      >
        read-only
      </span>
    )
  if (session.signedIn) return <SignedIn />

  const submit = (event: FormEvent) => {
    event.preventDefault()
    setBusy(true)
    api
      .signIn(actor, token)
      .then(() => {
        setToken('')
        reportError(null)
        refreshSession()
      })
      .catch((error: unknown) => reportError(`Sign-in failed: ${errorMessage(error)}`))
      .finally(() => setBusy(false))
  }
  return (
    <form className="sign-in" data-testid="sign-in-form" onSubmit={submit}>
      <input
        data-testid="sign-in-actor"
        aria-label="Your name"
        placeholder="your name"
        value={actor}
        maxLength={64}
        onChange={(e) => setActor(e.target.value)}
        required
      />
      <input
        data-testid="sign-in-token"
        aria-label="Operator or viewer token"
        placeholder="operator or viewer token"
        type="password"
        autoComplete="off"
        value={token}
        onChange={(e) => setToken(e.target.value)}
        required
      />
      <button data-testid="sign-in-submit" type="submit" disabled={busy}>
        Sign in
      </button>
    </form>
  )
}
