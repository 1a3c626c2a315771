/**
 * The released corpus on disk: `<dir>/schemas/<type>.json` (the JSON Schemas of docs/events as
 * released) and `<dir>/payloads/<type>.json` (a JSON array of real payloads of that type). The
 * repository's corpus is `packages/contracts/compat/released/`.
 */
import { readdirSync, readFileSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import type { ReleasedCorpus } from './gate.js'
import type { JsonSchema } from './schema-diff.js'

/** The repository's released corpus directory. */
export const RELEASED_DIR = fileURLToPath(new URL('../../compat/released/', import.meta.url))

const typeOfFile = (name: string) => name.replace(/\.json$/, '')

/**
 * Reads a released corpus. A missing `payloads/` directory or file reads as no payloads.
 * @throws Error naming the file when a schema is not a JSON object or a payload file not a JSON array,
 *   and when `<dir>/schemas` does not exist
 */
export function readCorpus(dir: string = RELEASED_DIR): ReleasedCorpus {
  const schemas = new Map<string, JsonSchema>()
  const payloads = new Map<string, unknown[]>()
  for (const name of jsonFiles(path.join(dir, 'schemas'), true)) {
    const schema = readJson(path.join(dir, 'schemas', name))
    if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) {
      throw new Error(`released schema ${name} is not a JSON object`)
    }
    schemas.set(typeOfFile(name), schema as JsonSchema)
  }
  for (const name of jsonFiles(path.join(dir, 'payloads'), false)) {
    const list = readJson(path.join(dir, 'payloads', name))
    if (!Array.isArray(list)) throw new Error(`released payloads ${name} is not a JSON array`)
    payloads.set(typeOfFile(name), list)
  }
  return { schemas, payloads }
}

function jsonFiles(dir: string, mustExist: boolean): string[] {
  try {
    return readdirSync(dir)
      .filter((name) => name.endsWith('.json'))
      .sort()
  } catch (error) {
    if (!mustExist && (error as NodeJS.ErrnoException).code === 'ENOENT') return []
    throw new Error(`no released corpus at ${dir}: ${(error as Error).message}`, { cause: error })
  }
}

function readJson(file: string): unknown {
  try {
    return JSON.parse(readFileSync(file, 'utf8'))
  } catch (error) {
    throw new Error(`${file}: ${(error as Error).message}`, { cause: error })
  }
}
