import { EnvError } from '@saga/service-kit'
import { describe, expect, it } from 'vitest'
import { loadConfig } from './config.js'

describe('payment config', () => {
  it('when PAYMENT_SLOW_TOKEN_DELAY_MS is not set, then tok_slow waits 10 s', () => {
    expect(loadConfig({}).PAYMENT_SLOW_TOKEN_DELAY_MS).toBe(10_000)
  })

  it('when the tok_slow delay would outlast the idle-in-transaction timeout, then the variable is refused by name', () => {
    const refused = () =>
      loadConfig({ PAYMENT_SLOW_TOKEN_DELAY_MS: '14500', DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_MS: '15000' })
    expect(refused).toThrow(EnvError)
    expect(refused).toThrow(/PAYMENT_SLOW_TOKEN_DELAY_MS: must stay at least 1000 ms below/)
    expect(
      loadConfig({ PAYMENT_SLOW_TOKEN_DELAY_MS: '30000', DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_MS: '0' })
        .PAYMENT_SLOW_TOKEN_DELAY_MS,
    ).toBe(30_000)
  })
})
