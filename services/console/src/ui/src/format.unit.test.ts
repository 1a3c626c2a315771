import { describe, expect, it } from 'vitest'
import { eventNameOf } from '@saga/contracts'
import {
  clock,
  dateTime,
  duration,
  factName,
  inputToIso,
  isoToInput,
  sinceCommit,
  timeOfDay,
  zoneName,
} from './format.js'

const iso = '2026-12-04T13:53:16.327Z'
const pad = (n: number, width = 2) => String(n).padStart(width, '0')

describe('one time format over the page', () => {
  it('when the page shows UTC, then date and time read YYYY-MM-DD HH:MM:SS UTC, hops HH:MM:SS.mmm', () => {
    expect(dateTime(iso, 'utc')).toBe('2026-12-04 13:53:16 UTC')
    expect(clock(iso, 'utc')).toBe('13:53:16.327')
    expect(timeOfDay(iso, 'utc')).toBe('13:53:16')
    expect(zoneName('utc')).toBe('UTC')
  })

  it('when the page shows local time, then the same format in the local zone, the zone named', () => {
    const d = new Date(iso)
    const time = `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`
    const date = `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}`
    expect(dateTime(iso, 'local')).toBe(`${date} ${time} ${zoneName('local', d)}`)
    expect(zoneName('local', d)).not.toBe('')
    expect(clock(iso, 'local')).toBe(`${time}.327`)
    expect(timeOfDay(iso, 'local')).toBe(time)
  })

  it('when a time is missing or not a time, then an en dash or the text as it came', () => {
    expect(dateTime(null, 'utc')).toBe('–')
    expect(clock(undefined, 'local')).toBe('–')
    expect(timeOfDay('soon', 'utc')).toBe('soon')
  })
})

describe('sinceCommit', () => {
  const committed = '2026-12-04T13:53:16.300Z'

  it('when a consumer recorded a fact after its commit, then the ms since the commit', () => {
    expect(sinceCommit(committed, '2026-12-04T13:53:16.345Z')).toBe(45)
  })

  it('when the clocks of two databases disagree, then 0, never a negative offset', () => {
    const offset = sinceCommit(committed, '2026-12-04T13:53:16.282Z')
    expect(offset).toBe(0)
    expect(`+${duration(offset)}`).toBe('+0 ms')
  })

  it('when either time is missing, then null', () => {
    expect(sinceCommit(null, committed)).toBeNull()
    expect(sinceCommit(committed, null)).toBeNull()
  })
})

describe('factName', () => {
  it('when a fact is named from its versioned type, then v1 is the bare name and a later version carries it, as the contracts name them', () => {
    for (const type of [
      'order.created.v1',
      'order.created.v2',
      'stock.reservation-failed.v1',
      'order.created.v10',
    ])
      expect(factName(type)).toBe(eventNameOf(type))
    expect(factName('order.created.v2')).toBe('OrderCreatedV2')
    expect(factName('stock.reservation-failed.v1')).toBe('StockReservationFailed')
  })

  it('when a type has no version suffix, then it is named like its routing key', () => {
    expect(factName('order.created')).toBe('OrderCreated')
  })
})

describe('time filters in the page zone', () => {
  it('when the page shows UTC, then a datetime-local value is read as UTC and an ISO time is shown in UTC', () => {
    expect(inputToIso('2026-12-04T13:45', 'utc')).toBe('2026-12-04T13:45:00.000Z')
    expect(isoToInput('2026-12-04T13:45:59.123Z', 'utc')).toBe('2026-12-04T13:45')
  })

  it('when the page shows local time, then the value is read in the browser zone, and both ways agree', () => {
    const local = '2026-06-01T08:30'
    expect(inputToIso(local, 'local')).toBe(new Date(local).toISOString())
    expect(isoToInput(inputToIso(local, 'local'), 'local')).toBe(local)
  })

  it('when empty or not a time, then empty', () => {
    expect(inputToIso('', 'utc')).toBe('')
    expect(inputToIso('not a time', 'local')).toBe('')
    expect(isoToInput(null, 'utc')).toBe('')
    expect(isoToInput('garbage', 'local')).toBe('')
  })
})
