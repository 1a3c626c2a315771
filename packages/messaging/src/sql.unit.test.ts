import { describe, expect, it } from 'vitest'
import {
  claimDue,
  dueOutboxInsert,
  expectResults,
  heldOutboxInsert,
  identifier,
  int,
  literal,
  markHeldPublished,
  markPublishedAndCommit,
  SqlResultError,
  SqlValueError,
  uuidArray,
  type StatementResult,
} from './sql.js'

/**
 * Reads a string constant back as PostgreSQL does with standard_conforming_strings on: `'...'` with
 * `''` for a quote, or `E'...'` with `\\` for a backslash and `''` for a quote. Throws at anything
 * else inside (a lone quote would end the constant early; any other backslash escape would change
 * the value), so a value that decodes equal could not have broken out of its constant.
 */
function decode(sql: string): string {
  const escape = sql.startsWith("E'")
  const body = sql.slice(escape ? 2 : 1, -1)
  if (!sql.endsWith("'") || !(escape || sql.startsWith("'"))) throw new Error(`not a constant: ${sql}`)
  let out = ''
  for (let i = 0; i < body.length; i += 1) {
    const c = body[i]
    if (c === "'") {
      if (body[i + 1] !== "'") throw new Error(`a lone quote at ${i} ends the constant early`)
      out += "'"
      i += 1
    } else if (c === '\\' && escape) {
      if (body[i + 1] !== '\\') throw new Error(`an escape other than \\\\ at ${i}`)
      out += '\\'
      i += 1
    } else out += c
  }
  return out
}

const HOSTILE = [
  '',
  'plain',
  "it's",
  "''",
  "'; DROP TABLE outbox_message; --",
  '\\',
  'ends with a backslash\\',
  "\\'",
  "\\''\\",
  '\\x41\\101\\u0041\\n',
  "E'\\x00'",
  '$$',
  '$tag$ body $tag$',
  '"double" "quotes"',
  '日本語 🎉 \u202e reversed \u2028 line separator é (e + combining)',
  '\u{1F4A9}\uFFFF',
  'x'.repeat(1_000_000),
  "'\\".repeat(200_000),
]

describe('literal', () => {
  it.each(
    HOSTILE.map((value) => [
      value.length > 40 ? `${value.slice(0, 20)}… (${value.length} chars)` : value,
      value,
    ]),
  )('when given %j, then it reads back as the same value and cannot end early', (_, value) => {
    expect(decode(literal(value))).toBe(value)
  })

  it('when a value has no backslash, then it is a plain constant with quotes doubled (read the same whatever standard_conforming_strings)', () => {
    expect(literal('plain')).toBe("'plain'")
    expect(literal("it's")).toBe("'it''s'")
    expect(literal('$$')).toBe("'$$'")
    expect(literal('"x"')).toBe(`'"x"'`)
  })

  it('when a value has a backslash, then it is an escape string with backslashes and quotes doubled', () => {
    expect(literal('a\\b')).toBe("E'a\\\\b'")
    expect(literal("\\'")).toBe("E'\\\\'''")
    expect(literal('end\\')).toBe("E'end\\\\'")
  })

  it('when the value is null, then it is NULL', () => {
    expect(literal(null)).toBe('NULL')
  })

  it('when a value holds a NUL character, then it is refused with a clear error', () => {
    expect(() => literal('a\0b')).toThrow(SqlValueError)
    expect(() => literal('\0')).toThrow(/NUL character/)
    expect(() => literal("it's\\\0")).toThrow(SqlValueError)
  })
})

describe('int, uuidArray, identifier', () => {
  it('when given integers, then int writes them; anything else is refused', () => {
    expect(int(0)).toBe('0')
    expect(int(-15)).toBe('-15')
    expect(int(Number.MAX_SAFE_INTEGER)).toBe('9007199254740991')
    for (const bad of [Number.NaN, Infinity, 1.5, 2 ** 53, '1; DROP TABLE x' as unknown as number])
      expect(() => int(bad, 'limit')).toThrow(/limit must be an integer/)
  })

  it('when every id is a UUID, then uuidArray writes a uuid[] constant; one that is not is refused', () => {
    const id = '0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b'
    expect(uuidArray([id, id.toUpperCase()], 'test')).toBe(`'{${id},${id.toUpperCase()}}'::uuid[]`)
    expect(uuidArray([], 'test')).toBe("'{}'::uuid[]")
    expect(() => uuidArray([id, "x}'::uuid[]; DROP TABLE outbox_message; --"], 'claim')).toThrow(
      /claim: every id must be a UUID/,
    )
  })

  it('when given a name, then identifier quotes it keeping its case, doubling double quotes; empty and NUL are refused', () => {
    expect(identifier('outbox')).toBe('"outbox"')
    expect(identifier('Out"box')).toBe('"Out""box"')
    expect(identifier("'; NOTIFY x; --")).toBe(`"'; NOTIFY x; --"`)
    expect(() => identifier('')).toThrow(SqlValueError)
    expect(() => identifier('a\0')).toThrow(SqlValueError)
  })
})

describe('statements with inlined values', () => {
  const row = {
    id: '0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b',
    type: "o'clock.v1",
    routing_key: 'a\\b',
    payload_json: '{"s":"\\"$$\\""}',
    headers_json: '{"correlationId":"c"}',
    aggregate_id: null,
  }

  it('when an outbox row is inserted with the COMMIT, then every value is a literal and the held row names its hold', () => {
    expect(dueOutboxInsert(row)).toBe(
      "INSERT INTO outbox_message (id, type, routing_key, payload, headers, aggregate_id) VALUES ('0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b'::uuid, 'o''clock.v1', E'a\\\\b', E'{\"s\":\"\\\\\"$$\\\\\"\"}', '{\"correlationId\":\"c\"}', NULL)",
    )
    expect(heldOutboxInsert(row, 15_000)).toMatch(
      /, clock_timestamp\(\) \+ 15000 \* interval '1 millisecond'\) RETURNING occurred_at$/,
    )
    expect(() => heldOutboxInsert(row, 1.5)).toThrow(SqlValueError)
    expect(() => dueOutboxInsert({ ...row, type: 'a\0' })).toThrow(SqlValueError)
  })

  it('when the relay claims and marks, then its statements keep the fragments the crash tests match', () => {
    const id = row.id
    expect(claimDue(100, { guardMs: 10_000, lockTimeoutMs: 1_000 })).toMatch(
      /LIMIT 100\s+FOR UPDATE SKIP LOCKED$/,
    )
    expect(claimDue(1, { guardMs: 10_000, lockTimeoutMs: 1_000 }, [id])).toContain(
      `AND id = ANY('{${id}}'::uuid[])`,
    )
    expect(markPublishedAndCommit([id])).toContain('SET published_at = now()')
    expect(markHeldPublished([id], 1_000)).toContain('SET published_at = now()')
    expect(() => claimDue(1.5, { guardMs: 10_000, lockTimeoutMs: 1_000 })).toThrow(SqlValueError)
  })
})

describe('expectResults', () => {
  const result = (command: string, rows: unknown[] = []): StatementResult => ({
    command,
    rowCount: rows.length,
    rows,
  })

  it('when the results match the commands, then they are returned as an array (one result too)', () => {
    const insert = result('INSERT', [{ id: 1 }])
    expect(expectResults([result('BEGIN'), insert], ['BEGIN', 'INSERT'], 'test')).toEqual([
      result('BEGIN'),
      insert,
    ])
    expect(expectResults(result('COMMIT'), ['COMMIT'], 'test')).toEqual([result('COMMIT')])
    expect(expectResults([result('BEGIN'), result('DELETE')], ['BEGIN', undefined], 'test')).toHaveLength(2)
  })

  it('when the count or a command differs, then it throws naming both', () => {
    expect(() => expectResults([result('BEGIN')], ['BEGIN', 'INSERT'], 'inbox')).toThrow(
      'inbox: expected results BEGIN, INSERT, the server answered BEGIN',
    )
    expect(() => expectResults([result('BEGIN'), result('SELECT')], ['BEGIN', 'INSERT'], 'inbox')).toThrow(
      SqlResultError,
    )
  })

  it('when a COMMIT is answered ROLLBACK, then it throws that the transaction was rolled back', () => {
    expect(() => expectResults(result('ROLLBACK'), ['COMMIT'], 'tx')).toThrow(
      /tx: the transaction was rolled back at COMMIT, nothing was written/,
    )
  })
})
