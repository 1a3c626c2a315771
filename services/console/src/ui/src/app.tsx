import { useCallback, useEffect, useMemo, useState } from 'react'
import { api, type SessionView } from './api.js'
import { Console, errorMessage, SIGNED_OUT } from './context.js'
import { zoneName, type Zone } from './format.js'
import { BulkPage } from './bulk-page.js'
import { FleetPage } from './fleet-page.js'
import { OrderPage } from './order-page.js'
import { OrdersPage } from './orders-page.js'
import { Link, useLocation } from './router.js'
import { SessionBox } from './session.js'

/** Where the browser keeps the zone chosen with the header's toggle. */
const ZONE_KEY = 'saga-console.zone'

/** The zone chosen before in this browser, else `local`. */
const storedZone = (): Zone => (localStorage.getItem(ZONE_KEY) === 'utc' ? 'utc' : 'local')

/** The header's toggle: names the zone the page's times are in; a click switches local <-> UTC. */
function ZoneToggle({ zone, setZone }: { zone: Zone; setZone: (zone: Zone) => void }) {
  const local = Intl.DateTimeFormat().resolvedOptions().timeZone
  return (
    <button
      className="zone-toggle"
      data-testid="zone-toggle"
      data-zone={zone}
      title={`Times are shown in ${zone === 'utc' ? 'UTC' : local}; click for ${zone === 'utc' ? local : 'UTC'}`}
      onClick={() => setZone(zone === 'utc' ? 'local' : 'utc')}
    >
      times in {zone === 'utc' ? 'UTC' : `${local} (${zoneName('local')})`}
    </button>
  )
}

/** The page of a path: `/` fleet, `/orders` list, `/orders/:id` one order, `/repair` bulk repair. */
function Page({ path }: { path: string }) {
  const order = /^\/orders\/([^/]+)$/.exec(path)
  if (order?.[1]) return <OrderPage id={decodeURIComponent(order[1])} />
  if (path === '/orders') return <OrdersPage />
  if (path === '/repair') return <BulkPage />
  if (path === '/') return <FleetPage />
  return <p data-testid="not-found">No page here. Go to the fleet.</p>
}

/** The console: navigation, sign-in, the error banner and the current page. */
export function App() {
  const { path } = useLocation()
  const [session, setSession] = useState<SessionView | null>(null)
  const [error, setError] = useState<string | null>(null)
  const [zone, setZoneState] = useState<Zone>(storedZone)
  const setZone = useCallback((next: Zone) => {
    localStorage.setItem(ZONE_KEY, next)
    setZoneState(next)
  }, [])
  const refreshSession = useCallback(() => {
    api
      .session()
      .then(setSession)
      .catch((e: unknown) => setError(errorMessage(e)))
  }, [])
  useEffect(refreshSession, [refreshSession])
  const context = useMemo(
    () => ({
      session: session ?? SIGNED_OUT,
      sessionKnown: session !== null,
      refreshSession,
      reportError: setError,
      zone,
      setZone,
    }),
    [session, refreshSession, zone, setZone],
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
        <Link to="/repair" className={path === '/repair' ? 'active' : ''} testId="nav-repair">
          Bulk repair
        </Link>
        <span className="spacer" />
        <ZoneToggle zone={zone} setZone={setZone} />
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
        {session?.readsNeedSignIn === true && !session.signedIn ? (
          <p data-testid="sign-in-to-read">
            Sign in to read: this console asks for a name and the viewer or the operator token.
          </p>
        ) : (
          // Once the session is known (or could not be read), so a console that asks readers to
          // sign in never starts a page's reads without one.
          (session !== null || error !== null) && <Page path={path} />
        )}
      </main>
    </Console.Provider>
  )
}
