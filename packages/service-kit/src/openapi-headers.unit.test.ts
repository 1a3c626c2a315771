import { describe, expect, it } from 'vitest'
import { documentResponseHeaders } from './openapi-headers.js'

describe('documentResponseHeaders', () => {
  it('when a response declares a known header, then it becomes a reference; x-request-id is on every response and retry-after on a 503', () => {
    const document = {
      openapi: '3.0.3',
      components: { schemas: { Thing: { type: 'object' } } },
      paths: {
        '/things': {
          parameters: [],
          post: {
            responses: {
              '201': { description: 'made', headers: { Location: { schema: { type: 'string' } } } },
              '503': { description: 'busy' },
            },
          },
        },
      },
    }
    const result = documentResponseHeaders(document) as typeof document & {
      components: { headers: Record<string, unknown> }
    }
    expect(result.paths['/things'].post.responses).toEqual({
      '201': {
        description: 'made',
        headers: {
          Location: { $ref: '#/components/headers/Location' },
          'x-request-id': { $ref: '#/components/headers/RequestId' },
        },
      },
      '503': {
        description: 'busy',
        headers: {
          'x-request-id': { $ref: '#/components/headers/RequestId' },
          'retry-after': { $ref: '#/components/headers/RetryAfter' },
        },
      },
    })
    expect(result.paths['/things'].parameters).toEqual([])
    expect(result.components.schemas).toEqual({ Thing: { type: 'object' } })
    expect(Object.keys(result.components.headers)).toEqual([
      'RequestId',
      'RetryAfter',
      'Location',
      'IdempotentReplayed',
    ])
    // The input is left as it was.
    expect(document.paths['/things'].post.responses['503']).toEqual({ description: 'busy' })
  })
})
