import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync, mkdirSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { localAdminToken } from './admin-token.js'

const roots: string[] = []
afterEach(() => {
  for (const root of roots.splice(0)) rmSync(root, { recursive: true, force: true })
})
const newRoot = () => {
  const root = mkdtempSync(join(tmpdir(), 'admin-token-'))
  roots.push(root)
  return root
}

describe('localAdminToken', () => {
  it('when ADMIN_TOKEN is set, then it is the token and no file is written', () => {
    const root = newRoot()
    const found = localAdminToken(root, { ADMIN_TOKEN: 'a-token-of-twenty-chars' })
    expect(found).toEqual({ token: 'a-token-of-twenty-chars', source: 'ADMIN_TOKEN', created: false })
    expect(() => statSync(join(root, '.saga'))).toThrow(/ENOENT/)
  })

  it('when nothing is set, then a token is made into .saga/admin-token with mode 0600 and kept for the next start', () => {
    const root = newRoot()
    const first = localAdminToken(root, {})
    expect(first.created).toBe(true)
    expect(first.source).toBe(join('.saga', 'admin-token'))
    expect(first.token).toMatch(/^[A-Za-z0-9_-]{43}$/)
    const file = join(root, '.saga', 'admin-token')
    expect(statSync(file).mode & 0o777).toBe(0o600)
    expect(readFileSync(file, 'utf8').trim()).toBe(first.token)
    expect(localAdminToken(root, {})).toEqual({ ...first, created: false })
  })

  it('when ADMIN_TOKEN or the file holds fewer than 16 characters, then it throws naming where', () => {
    expect(() => localAdminToken(newRoot(), { ADMIN_TOKEN: 'short' })).toThrow(
      'ADMIN_TOKEN holds 5 characters; an admin token needs at least 16',
    )
    const root = newRoot()
    mkdirSync(join(root, '.saga'))
    writeFileSync(join(root, '.saga', 'admin-token'), 'tiny\n')
    expect(() => localAdminToken(root, {})).toThrow(`${join('.saga', 'admin-token')} holds 4 characters`)
  })
})
