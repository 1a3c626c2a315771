import { describe, expect, it } from 'vitest'
import { DEFAULT_SESSION_LIMITS, sessionConnection } from './database-session.js'

describe('sessionConnection', () => {
  it('when given a URL and the default limits, then the startup options pin UTC and each limit', () => {
    const { connectionString, options } = sessionConnection(
      'postgresql://order_service:pw@db:5432/order_service',
      DEFAULT_SESSION_LIMITS,
    )
    expect(connectionString).toBe('postgresql://order_service:pw@db:5432/order_service')
    expect(options).toBe(
      '-c TimeZone=UTC -c jit=off -c statement_timeout=5000 -c lock_timeout=2000 -c idle_in_transaction_session_timeout=15000',
    )
  })

  it('when the URL carries its own options, then they are kept before ours, so ours win', () => {
    const { connectionString, options } = sessionConnection(
      'postgresql://u@h/d?sslmode=disable&options=-c%20TimeZone%3DEurope%2FParis%20-c%20work_mem%3D8MB',
      { statementTimeoutMs: 0, lockTimeoutMs: 1, idleInTransactionTimeoutMs: 2 },
    )
    expect(connectionString).toBe('postgresql://u@h/d?sslmode=disable')
    expect(options).toBe(
      '-c TimeZone=Europe/Paris -c work_mem=8MB -c TimeZone=UTC -c jit=off -c statement_timeout=0 -c lock_timeout=1 -c idle_in_transaction_session_timeout=2',
    )
  })

  it('when a limit is negative or fractional, then a RangeError names it', () => {
    expect(() =>
      sessionConnection('postgresql://u@h/d', { ...DEFAULT_SESSION_LIMITS, lockTimeoutMs: -1 }),
    ).toThrow(/lockTimeoutMs must be a whole number of ms >= 0, got -1/)
    expect(() =>
      sessionConnection('postgresql://u@h/d', { ...DEFAULT_SESSION_LIMITS, statementTimeoutMs: 1.5 }),
    ).toThrow(/statementTimeoutMs/)
  })
})
