import { useEffect, useState, type MouseEvent, type ReactNode } from 'react'

const listeners = new Set<() => void>()

/** Goes to `to` (a path with its query) without reloading, and tells every `useLocation`. */
export function navigate(to: string): void {
  window.history.pushState(null, '', to)
  for (const listener of listeners) listener()
}

/** The current path and query, updated on `navigate` and on the browser's back and forward. */
export function useLocation(): { path: string; search: URLSearchParams } {
  const read = () => ({ path: window.location.pathname, search: new URLSearchParams(window.location.search) })
  const [location, setLocation] = useState(read)
  useEffect(() => {
    const update = () => setLocation(read())
    listeners.add(update)
    window.addEventListener('popstate', update)
    return () => {
      listeners.delete(update)
      window.removeEventListener('popstate', update)
    }
  }, [])
  return location
}

/** A link that navigates in the app (a modified click opens it the browser's way). */
export function Link(props: { to: string; children: ReactNode; testId?: string; className?: string }) {
  const onClick = (event: MouseEvent<HTMLAnchorElement>) => {
    if (event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return
    event.preventDefault()
    navigate(props.to)
  }
  return (
    <a href={props.to} onClick={onClick} data-testid={props.testId} className={props.className}>
      {props.children}
    </a>
  )
}
