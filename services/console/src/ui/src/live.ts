import { useEffect, useState } from 'react'
import type { FleetSnapshot } from './api.js'

/** The latest fleet snapshot from `/api/live`, and whether the stream is connected. */
export function useLiveFleet(): { snapshot: FleetSnapshot | null; connected: boolean } {
  const [snapshot, setSnapshot] = useState<FleetSnapshot | null>(null)
  const [connected, setConnected] = useState(false)
  useEffect(() => {
    // EventSource reconnects by itself (the server's `retry: 3000`).
    const source = new EventSource('/api/live')
    source.addEventListener('open', () => setConnected(true))
    source.addEventListener('error', () => setConnected(false))
    source.addEventListener('fleet', (event: MessageEvent<string>) => {
      setConnected(true)
      setSnapshot(JSON.parse(event.data) as FleetSnapshot)
    })
    return () => source.close()
  }, [])
  return { snapshot, connected }
}
