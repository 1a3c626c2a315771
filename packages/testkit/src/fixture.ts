import { afterAll, beforeAll } from 'vitest'

/** How long `create` and `cleanup` may take, ms (vitest's hook timeout when absent). */
export interface FixtureHooks {
  createMs?: number
  cleanupMs?: number
}

/**
 * Registers `create()` before the tests of the enclosing `describe` (or file) and `cleanup(fixture)`
 * after them (default: the fixture's own `cleanup()`, or `drop()` when it has none), and returns a stand-in for the fixture:
 * reading a property of it reads the created fixture's (methods bound to it), so tests use it as the
 * fixture itself. Reading it before `create` resolved (outside the tests) throws.
 * Examples: `const f = useFixture(() => relayFixture('relay'))`, then `f.tap` in a test;
 * `const db = useFixture(() => createTestDatabase({ prefix: 'x' }))`, dropped after the tests;
 * `const broker = useFixture(startPrivateRabbitmq, (b) => b.stop(), PRIVATE_RABBITMQ_HOOKS)`.
 */
export function useFixture<T extends { cleanup(): Promise<unknown> } | { drop(): Promise<unknown> }>(
  create: () => Promise<T>,
): T
export function useFixture<T extends object>(
  create: () => Promise<T>,
  cleanup: (fixture: T) => Promise<unknown>,
  hooks?: FixtureHooks,
): T
export function useFixture<T extends object>(
  create: () => Promise<T>,
  cleanup: (fixture: T) => Promise<unknown> = ownCleanup,
  hooks: FixtureHooks = {},
): T {
  let fixture: T | undefined
  beforeAll(async () => {
    fixture = await create()
  }, hooks.createMs)
  afterAll(async () => {
    if (fixture !== undefined) await cleanup(fixture)
  }, hooks.cleanupMs)
  return new Proxy({} as T, {
    get(_target, property) {
      if (fixture === undefined) throw new Error('useFixture: the fixture is only set inside tests')
      const value: unknown = Reflect.get(fixture, property, fixture)
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(fixture) : value
    },
  })
}

/** The fixture's own `cleanup()`, else its `drop()`. */
function ownCleanup(fixture: object): Promise<unknown> {
  const own = fixture as { cleanup?: () => Promise<unknown>; drop?: () => Promise<unknown> }
  if (own.cleanup) return own.cleanup()
  if (own.drop) return own.drop()
  throw new Error('useFixture: the fixture has neither cleanup() nor drop()')
}
