import { describe, expect, it } from 'vitest'
import { DEFAULT_FAULTS, FAULT_MENU, parseFaultList, planFaults } from './schedule.js'

describe('the fault schedule', () => {
  const options = { seed: 1234, durationS: 600, faults: DEFAULT_FAULTS }

  it('when planned twice from one seed, then the schedules are the same; another seed gives another', () => {
    expect(planFaults(options)).toEqual(planFaults(options))
    expect(planFaults({ ...options, seed: 1235 })).not.toEqual(planFaults(options))
  })

  it('when planned, then faults are gap-apart within the duration and each round fires every kind once', () => {
    const plan = planFaults({ ...options, gapS: { min: 8, max: 20 } })
    expect(plan[0]?.atS).toBe(15)
    for (let i = 1; i < plan.length; i++) {
      const gap = plan[i]!.atS - plan[i - 1]!.atS
      expect(gap).toBeGreaterThanOrEqual(8)
      expect(gap).toBeLessThanOrEqual(20)
    }
    expect(plan.every((f) => f.atS < 600)).toBe(true)
    const firstRound = plan.slice(0, DEFAULT_FAULTS.length).map((f) => f.kind)
    expect([...firstRound].sort()).toEqual([...DEFAULT_FAULTS].sort())
  })

  it('when planned, then each fault has a target and hold time fitting its kind', () => {
    for (const fault of planFaults(options)) {
      if (fault.kind === 'stop') expect(fault.holdMs).toBe(10_000)
      if (fault.kind === 'kill') expect(fault.holdMs).toBeGreaterThanOrEqual(1_000)
      if (fault.kind === 'kill' || fault.kind === 'stop') expect(fault.target).not.toBe('all')
      if (fault.kind === 'broker-cut') expect(fault.target).toBe('all')
    }
  })

  it('when a number of rounds is asked for, then exactly those rounds are planned, however short the duration', () => {
    const plan = planFaults({ ...options, durationS: 10, rounds: 1, warmupS: 3, gapS: { min: 2, max: 4 } })
    expect(plan.map((f) => f.kind).sort()).toEqual([...DEFAULT_FAULTS].sort())
    expect(plan[0]?.atS).toBe(3)
    expect(plan.at(-1)!.atS).toBeGreaterThanOrEqual(10)
  })

  it('when no kind is named, then planning refuses', () => {
    expect(() => planFaults({ ...options, faults: [] })).toThrow('no faults to plan')
  })
})

describe('parseFaultList', () => {
  it('when "default" is named with an extra kind, then both are in the list once', () => {
    expect(parseFaultList('default,queue-delete,kill')).toEqual([...DEFAULT_FAULTS, 'queue-delete'])
  })

  it('when a kind is unknown, then the error names it and the menu', () => {
    expect(() => parseFaultList('kill,explode')).toThrow(
      `unknown fault "explode"; the menu: ${FAULT_MENU.map((e) => e.kind).join(', ')}`,
    )
  })

  it('when the menu is read, then queue-delete and postgres-restart are off by default and say why', () => {
    for (const entry of FAULT_MENU.filter((e) => !e.byDefault)) expect(entry.offBecause).toBeTruthy()
    expect(DEFAULT_FAULTS).not.toContain('queue-delete')
    expect(DEFAULT_FAULTS).not.toContain('postgres-restart')
  })
})
