import { randomBytes } from 'node:crypto'
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { dirname, join, relative } from 'node:path'
import { MIN_ADMIN_TOKEN_LENGTH } from '@saga/messaging-admin/fastify'
import type { Env } from './start-env.js'

/** Where a local fleet's admin token came from, for the one line `npm start` says about it. */
export interface LocalAdminToken {
  token: string
  /** `ADMIN_TOKEN` when the caller set it, else the file's path relative to the repository root. */
  source: string
  /** The token was made by this start (the file did not exist). */
  created: boolean
}

/** Tokens shorter than this are refused by the services (the messaging admin's guard, service-kit's ADMIN_TOKEN setting). */
export { MIN_ADMIN_TOKEN_LENGTH }

/**
 * The credential the admin writes of a local fleet need (messaging's requeue, discard and retry, the
 * console's actions): `ADMIN_TOKEN` when set, else the token kept in `<root>/.saga/admin-token`, made on
 * the first start (32 random bytes, base64url) with mode 0600 in a git-ignored folder. The token is
 * never printed: `npm start` names where it is, and the console's sign-in asks for it.
 * @throws Error when ADMIN_TOKEN, or the file, holds fewer than 16 characters
 */
export function localAdminToken(root: string, env: Env): LocalAdminToken {
  if (env.ADMIN_TOKEN) return checked({ token: env.ADMIN_TOKEN, source: 'ADMIN_TOKEN', created: false })
  const file = join(root, '.saga', 'admin-token')
  const source = relative(root, file)
  try {
    return checked({ token: readFileSync(file, 'utf8').trim(), source, created: false })
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error
  }
  const token = randomBytes(32).toString('base64url')
  mkdirSync(dirname(file), { recursive: true, mode: 0o700 })
  writeFileSync(file, `${token}\n`, { mode: 0o600, flag: 'wx' })
  chmodSync(file, 0o600)
  return { token, source, created: true }
}

function checked(found: LocalAdminToken): LocalAdminToken {
  if (found.token.length < MIN_ADMIN_TOKEN_LENGTH) {
    throw new Error(
      `${found.source} holds ${found.token.length} characters; an admin token needs at least ${MIN_ADMIN_TOKEN_LENGTH}`,
    )
  }
  return found
}
