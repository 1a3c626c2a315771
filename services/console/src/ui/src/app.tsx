import { useCallback, useEffect, useMemo, useState } from 'react'
import { api, type SessionView } from './api.js'
import { Console, errorMessage } from './context.js'
import { FleetPage } from './fleet-page.js'
import { OrderPage } from './order-page.js'
import { OrdersPage } from './orders-page.js'
import { Link, useLocation } from './router.js'
import { SessionBox } from './session.js'

const NO_SESSION: SessionView = { signedIn: false, actor: null, writesEnabled: false }

/** The page of a path: `/` fleet, `/orders` list, `/orders/:id` one order. */
function Page({ path }: { path: string }) {
  const order = /^\/orders\/([^/]+)$/.exec(path)
  if (order?.[1]) return <OrderPage id={decodeURIComponent(order[1])} />
  if (path === '/orders') return <OrdersPage />
  if (path === '/') return <FleetPage />
  return <p data-testid="not-found">No page here. Go to the fleet.</p>
}

/** The console: navigation, sign-in, the error banner and the current page. */
export function App() {
  const { path } = useLocation()
  const [session, setSession] = useState<SessionView | null>(null)
  const [error, setError] = useState<string | null>(null)
  const refreshSession = useCallback(() => {
    api
      .session()
      .then(setSession)
      .catch((e: unknown) => setError(errorMessage(e)))
  }, [])
  useEffect(refreshSession, [refreshSession])
  const context = useMemo(
    () => ({
      session: session ?? NO_SESSION,
      sessionKnown: session !== null,
      refreshSession,
      reportError: setError,
    }),
    [session, refreshSession],
  )
  return (
    <Console.Provider value={context}>
      <header className="top">
        <strong>Saga console</strong>
        <Link to="/" className={path === '/' ? 'active' : ''} testId="nav-fleet">
          Fleet
        </Link>
        <Link to="/orders" className={path.startsWith('/orders') ? 'active' : ''} testId="nav-orders">
          Orders
        </Link>
        <span className="spacer" />
        <SessionBox />
      </header>
      <main>
        {error !== null && (
          <div className="error-banner" data-testid="error-banner" role="alert">
            <span>{error}</span>
            <button onClick={() => setError(null)} aria-label="Dismiss">
              ×
            </button>
          </div>
        )}
        <Page path={path} />
      </main>
    </Console.Provider>
  )
}
