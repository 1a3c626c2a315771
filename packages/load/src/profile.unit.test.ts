import { describe, expect, it } from 'vitest'
import { packageOf, summarize } from './profile.js'

describe('profile summary', () => {
  it('when a frame comes from a dependency, a workspace, node or V8, then it is grouped by that package', () => {
    expect(packageOf('file:///r/node_modules/@prisma/client/runtime/x.js', 'f')).toBe('@prisma/client')
    expect(packageOf('file:///r/node_modules/pg/lib/client.js', 'f')).toBe('pg')
    expect(packageOf('file:///r/packages/messaging/dist/outbox/relay.js', 'f')).toBe('workspace:messaging')
    expect(packageOf('node:internal/stream_base_commons', 'writev')).toBe('node:stream_base_commons')
    expect(packageOf('', '(garbage collector)')).toBe('(garbage collector)')
    expect(packageOf('', 'writev')).toBe('(native)')
  })

  it('when samples are summed, then idle is left out and self time goes to the sampled frame', () => {
    const frame = (functionName: string, url = '') => ({ functionName, url, lineNumber: 0 })
    const result = summarize({
      nodes: [
        { id: 1, callFrame: frame('(idle)') },
        { id: 2, callFrame: frame('query', 'file:///r/node_modules/pg/lib/client.js') },
        { id: 3, callFrame: frame('(garbage collector)') },
      ],
      samples: [1, 2, 2, 3],
      timeDeltas: [1_000, 300, 200, 100],
    })
    expect(result.busy).toBe(600)
    expect(result.packages).toEqual([
      ['pg', 500],
      ['(garbage collector)', 100],
    ])
  })
})
