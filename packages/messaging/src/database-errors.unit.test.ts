import { describe, expect, it } from 'vitest'
import {
  isDatabaseUnavailable,
  isRejectedValue,
  isSessionEnded,
  isTransientDatabaseError,
} from './database-errors.js'
import { SqlValueError } from './sql.js'

// The shapes @prisma/adapter-pg 7 throws, as captured from a real server (P2039/P2010 wrap the pg
// error in meta.driverAdapterError.cause).
const prisma = (code: string, cause: object): Error =>
  Object.assign(new Error('Invalid `prisma.order.create()` invocation'), {
    name: 'PrismaClientKnownRequestError',
    code,
    meta: { driverAdapterError: { name: 'DriverAdapterError', cause } },
  })
const pgCause = (code: string, message: string) => ({ originalCode: code, kind: 'postgres', code, message })
const socket = (code: string): Error =>
  Object.assign(new Error(`connect ${code}`), { code, errno: -1, syscall: 'connect' })

describe('isDatabaseUnavailable', () => {
  it.each([
    [
      'a lock timeout through Prisma',
      prisma('P2039', pgCause('55P03', 'canceling statement due to lock timeout')),
    ],
    [
      'a statement timeout in raw SQL',
      prisma('P2010', pgCause('57014', 'canceling statement due to statement timeout')),
    ],
    [
      'an administrator terminating the session',
      prisma('P2010', pgCause('57P01', 'terminating connection due to administrator command')),
    ],
    ['a server starting up', prisma('P2039', pgCause('57P03', 'the database system is starting up'))],
    [
      'an unreachable server',
      prisma('P1001', { kind: 'DatabaseNotReachable', host: '127.0.0.1', port: 5432 }),
    ],
    ['a connection reset under Prisma', prisma('P2039', { kind: 'ConnectionClosed' })],
    [
      'a closed connection (P1017)',
      Object.assign(new Error('Server has closed the connection.'), { code: 'P1017' }),
    ],
    [
      'a pool timeout (P2024)',
      Object.assign(new Error('Timed out fetching a new connection'), { code: 'P2024' }),
    ],
    [
      'no transaction within maxWait (P2028)',
      Object.assign(new Error('Transaction API error'), { code: 'P2028' }),
    ],
    ['a link cut mid-query (pg, no code)', new Error('Connection terminated unexpectedly')],
    ['the pool connect timeout', new Error('timeout exceeded when trying to connect')],
    ['a refused socket', socket('ECONNREFUSED')],
    [
      'a connection-exception SQLSTATE class 08',
      Object.assign(new Error('x'), { code: '08006', severity: 'FATAL' }),
    ],
    ['a wrapped cause', new Error('driver adapter failed', { cause: socket('ECONNRESET') })],
    [
      'a database whose connections are switched off',
      Object.assign(new Error('database "shop" is not currently accepting connections'), { code: '55000' }),
    ],
  ])('when the error is %s, then it means unavailable', (_name, error) => {
    expect(isDatabaseUnavailable(error)).toBe(true)
  })

  it.each([
    ['a unique violation', prisma('P2002', { kind: 'UniqueConstraintViolation' })],
    ['a check violation in raw SQL', prisma('P2010', pgCause('23514', 'new row violates check constraint'))],
    ['a syntax error', Object.assign(new Error('syntax error at or near "SELEC"'), { code: '42601' })],
    ['a bug', new TypeError('cannot read properties of undefined')],
    [
      'the same SQLSTATE for a bug (currval before nextval)',
      Object.assign(new Error('currval of sequence "s" is not yet defined in this session'), {
        code: '55000',
      }),
    ],
    ['a message merely mentioning a connection', new Error('the connection pool config is invalid')],
    ['not an error', 'Connection terminated'],
  ])('when the error is %s, then it does not', (_name, error) => {
    expect(isDatabaseUnavailable(error)).toBe(false)
  })
})

describe('isTransientDatabaseError', () => {
  it.each([
    ['a serialization failure', Object.assign(new Error('could not serialize access'), { code: '40001' })],
    ['a deadlock victim', Object.assign(new Error('deadlock detected'), { code: '40P01' })],
    ['a terminated session', Object.assign(new Error('terminating connection'), { code: '57P01' })],
    ['a lost connection (no code)', new Error('Connection terminated unexpectedly')],
  ])('when the error is %s, then running the transaction again may succeed', (_name, error) => {
    expect(isTransientDatabaseError(error)).toBe(true)
  })

  it.each([
    ['a unique violation', Object.assign(new Error('duplicate key'), { code: '23505' })],
    ['a bug in the handler', new TypeError('cannot read properties of undefined')],
  ])('when the error is %s, then it is the handler’s own', (_name, error) => {
    expect(isTransientDatabaseError(error)).toBe(false)
  })
})

describe('isRejectedValue', () => {
  it.each([
    ['an index row too large', Object.assign(new Error('index row requires 10832 bytes'), { code: '54000' })],
    ['a NUL in jsonb', Object.assign(new Error('unsupported Unicode escape sequence'), { code: '22P05' })],
    ['a value SQL text cannot inline', new SqlValueError('a NUL character (U+0000) cannot be sent')],
    ['one under a cause', new Error('wrapped', { cause: Object.assign(new Error('x'), { code: '22021' }) })],
  ])('when the error is %s, then the same values fail again', (_name, error) => {
    expect(isRejectedValue(error)).toBe(true)
  })

  it.each([
    ['a terminated session', Object.assign(new Error('terminating connection'), { code: '57P01' })],
    ['a deadlock victim', Object.assign(new Error('deadlock detected'), { code: '40P01' })],
    ['a lost connection (no code)', new Error('Connection terminated unexpectedly')],
  ])('when the error is %s, then it is not the values', (_name, error) => {
    expect(isRejectedValue(error)).toBe(false)
  })
})

describe('isSessionEnded', () => {
  it.each([
    ['terminated by an administrator', Object.assign(new Error('terminating connection'), { code: '57P01' })],
    ['ended by a crash', Object.assign(new Error('terminating connection'), { code: '57P02' })],
    ['idle in a transaction too long', Object.assign(new Error('terminating connection'), { code: '25P03' })],
    ['a socket closed under it (no code)', new Error('Connection terminated unexpectedly')],
    [
      'wrapped by Prisma',
      prisma('P2010', pgCause('57P01', 'terminating connection due to administrator command')),
    ],
  ])('when the session was %s, then it has ended', (_name, error) => {
    expect(isSessionEnded(error)).toBe(true)
  })

  it.each([
    [
      'a lock timeout',
      Object.assign(new Error('canceling statement due to lock timeout'), { code: '55P03' }),
    ],
    ['a refused connection', Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' })],
    ['a unique violation', Object.assign(new Error('duplicate key'), { code: '23505' })],
  ])('when the statement failed with %s, then the session lives on', (_name, error) => {
    expect(isSessionEnded(error)).toBe(false)
  })
})
