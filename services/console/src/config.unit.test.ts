import { EnvError } from '@saga/service-kit'
import { describe, expect, it } from 'vitest'
import { loadConfig } from './config.js'

describe('loadConfig', () => {
  it('when nothing is set, then the contract defaults apply and the console is read-only', () => {
    const config = loadConfig({})
    expect(config).toMatchObject({
      PORT: 3005,
      HOST: '127.0.0.1',
      CONSOLE_POLL_MS: 2_000,
      serviceUrls: {
        order: 'http://127.0.0.1:3001',
        payment: 'http://127.0.0.1:3002',
        inventory: 'http://127.0.0.1:3003',
        shipment: 'http://127.0.0.1:3004',
      },
    })
    expect(config.ADMIN_TOKEN).toBeUndefined()
  })

  it('when CONSOLE_VIEWER_TOKEN is the operator token, then the error names it and never quotes the value', () => {
    const token = 'the-same-token-0123456789'
    const attempt = () => loadConfig({ ADMIN_TOKEN: token, CONSOLE_VIEWER_TOKEN: token })
    expect(attempt).toThrow(EnvError)
    expect(attempt).toThrow(/CONSOLE_VIEWER_TOKEN/)
    expect(attempt).not.toThrow(new RegExp(token))
    expect(
      loadConfig({ ADMIN_TOKEN: token, CONSOLE_VIEWER_TOKEN: `${token}-viewer` }).CONSOLE_VIEWER_TOKEN,
    ).toBe(`${token}-viewer`)
  })

  it('when ADMIN_TOKEN is too short, then the error names the variable and never quotes the value', () => {
    const attempt = () => loadConfig({ ADMIN_TOKEN: 'short-secret' })
    expect(attempt).toThrow(EnvError)
    expect(attempt).toThrow(/ADMIN_TOKEN/)
    expect(attempt).not.toThrow(/short-secret/)
  })

  it('when ADMIN_TOKEN and TRACE_URL_TEMPLATE are empty (as Compose passes unset ones), then they are unset', () => {
    const config = loadConfig({ ADMIN_TOKEN: '', TRACE_URL_TEMPLATE: '' })
    expect(config.ADMIN_TOKEN).toBeUndefined()
    expect(config.TRACE_URL_TEMPLATE).toBeUndefined()
  })

  it('when TRACE_URL_TEMPLATE has no {traceId}, then it is refused', () => {
    expect(() => loadConfig({ TRACE_URL_TEMPLATE: 'http://127.0.0.1:16686/trace/' })).toThrow(
      /TRACE_URL_TEMPLATE/,
    )
    expect(
      loadConfig({ TRACE_URL_TEMPLATE: 'http://127.0.0.1:16686/trace/{traceId}' }).TRACE_URL_TEMPLATE,
    ).toBe('http://127.0.0.1:16686/trace/{traceId}')
  })

  it('when CONSOLE_TRUST_PROXY is true, false, empty or addresses, then fastify gets it; anything else is refused naming the entry', () => {
    expect(loadConfig({}).CONSOLE_TRUST_PROXY).toBe(false)
    expect(loadConfig({ CONSOLE_TRUST_PROXY: '' }).CONSOLE_TRUST_PROXY).toBe(false)
    expect(loadConfig({ CONSOLE_TRUST_PROXY: 'true' }).CONSOLE_TRUST_PROXY).toBe(true)
    expect(loadConfig({ CONSOLE_TRUST_PROXY: 'false' }).CONSOLE_TRUST_PROXY).toBe(false)
    expect(loadConfig({ CONSOLE_TRUST_PROXY: '10.0.0.0/8, 127.0.0.1,fd00::/8' }).CONSOLE_TRUST_PROXY).toBe(
      '10.0.0.0/8,127.0.0.1,fd00::/8',
    )
    for (const bad of ['2', 'ingress', '10.0.0.0/33', '::1/129', '10.0.0.1/8/1', '127.0.0.1,']) {
      expect(() => loadConfig({ CONSOLE_TRUST_PROXY: bad }), bad).toThrow(/CONSOLE_TRUST_PROXY/)
    }
    expect(() => loadConfig({ CONSOLE_TRUST_PROXY: '127.0.0.1,ingress' })).toThrow(/not an address: ingress/)
  })
})
