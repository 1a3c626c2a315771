import { describe, expect, it } from 'vitest'
import { newSeed } from '../src/soak/random.js'
import { formatReport } from '../src/soak/report.js'
import { DEFAULT_FAULTS } from '../src/soak/schedule.js'
import { runSoak } from '../src/soak/soak.js'

// `npm run soak` for 3 minutes: a steady load with customer cancellations while every default
// fault of the menu fires (kill -9, SIGSTOP, broker connections closed, the broker link cut,
// database sessions terminated), then the ledger in SQL, the tap and the broker. The seed is
// random and printed; E2E_SOAK_SEED replays a run.
describe('chaos soak', () => {
  it('when faults of every default kind fire under load for 3 minutes, then every invariant holds and nothing is dead-lettered or left waiting', async () => {
    const seed = process.env.E2E_SOAK_SEED ? Number(process.env.E2E_SOAK_SEED) : newSeed()
    const report = await runSoak({
      seed,
      durationS: 180,
      ratePerS: 5,
      cancelShare: 0.15,
      faults: DEFAULT_FAULTS,
      gapS: { min: 8, max: 16 },
      say: (line) => process.stdout.write(`[soak] ${line}\n`),
    })
    process.stdout.write(`${formatReport(report)}\n`)

    expect(new Set(report.faults.map((f) => f.kind))).toEqual(new Set(DEFAULT_FAULTS))
    expect(report.faults.filter((f) => f.error)).toEqual([])
    for (const [invariant, violations] of Object.entries(report.invariants))
      expect({ invariant, violations: violations.slice(0, 10) }).toEqual({ invariant, violations: [] })
    expect(report.broker).toEqual({ deadLettered: [], waiting: [] })
    expect(report.load.unresolved).toBe(0)
    expect(report.load.refused).toEqual([])
    expect(report.orders.total).toBe(report.load.placed)
    expect(report.orders.total).toBeGreaterThan(500)
    expect(report.orders.confirmed).toBeGreaterThan(0)
    expect(report.orders.cancelled).toBeGreaterThan(0)
    expect(Object.values(report.health)).toEqual([200, 200, 200, 200])
    expect(report.ok).toBe(true)
  }, 1_200_000)
})
