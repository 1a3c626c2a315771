import { describe, expect, it } from 'vitest'
import { newSeed } from '../src/soak/random.js'
import { formatReport } from '../src/soak/report.js'
import { DEFAULT_FAULTS } from '../src/soak/schedule.js'
import { runSoak } from '../src/soak/soak.js'

// `npm run soak` cut to one round: a steady load with customer cancellations for 45 s while each
// default fault fires once, 2-4 s apart (kill -9, SIGSTOP, broker connections closed, the broker
// link cut, database sessions terminated), then the ledger in SQL, the tap and the broker. The load
// goes on until the last fault is over should the round outlast the 45 s. The seed is random and
// printed; E2E_SOAK_SEED replays a run. `npm run soak` keeps its 10 minutes and its rounds until the end.
const RATE_PER_S = 5
const DURATION_S = 45

describe('chaos soak', () => {
  it('when each default fault fires once under load, then every invariant holds and nothing is dead-lettered or left waiting', async () => {
    const seed = process.env.E2E_SOAK_SEED ? Number(process.env.E2E_SOAK_SEED) : newSeed()
    const report = await runSoak({
      seed,
      durationS: DURATION_S,
      ratePerS: RATE_PER_S,
      cancelShare: 0.15,
      faults: DEFAULT_FAULTS,
      rounds: 1,
      warmupS: 3,
      gapS: { min: 2, max: 4 },
      say: (line) => process.stdout.write(`[soak] ${line}\n`),
    })
    process.stdout.write(`${formatReport(report)}\n`)

    expect(report.faults.map((f) => f.kind).sort()).toEqual([...DEFAULT_FAULTS].sort())
    expect(report.faults.filter((f) => f.error)).toEqual([])
    for (const [invariant, violations] of Object.entries(report.invariants))
      expect({ invariant, violations: violations.slice(0, 10) }).toEqual({ invariant, violations: [] })
    expect(report.broker).toEqual({ deadLettered: [], waiting: [] })
    expect(report.load.unresolved).toBe(0)
    expect(report.load.refused).toEqual([])
    expect(report.orders.total).toBe(report.load.placed)
    // The load is paced by the clock and catches up when late, so it placed an order every 200 ms.
    expect(report.orders.total).toBeGreaterThanOrEqual(0.9 * RATE_PER_S * DURATION_S)
    expect(report.orders.confirmed).toBeGreaterThan(0)
    expect(report.orders.cancelled).toBeGreaterThan(0)
    expect(Object.values(report.health)).toEqual([200, 200, 200, 200])
    expect(report.ok).toBe(true)
  }, 600_000)
})
