import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import ts from 'typescript'
import { describe, expect, it } from 'vitest'

// The package's public surface, read the way a user's compiler reads it: every entry point in
// package.json's `exports` (the `types` condition mapped back to its source file) and the names its
// module exports, values and types alike. Costs about 2 s (one TypeScript program over src/).

const packageDir = fileURLToPath(new URL('..', import.meta.url))
const packageJson = JSON.parse(readFileSync(`${packageDir}package.json`, 'utf8')) as {
  exports: Record<string, string | { types: string }>
}

/** package.json's code entry points (SQL files and other assets skipped), each with its source file. */
function entryPoints(): Map<string, string> {
  const entries = new Map<string, string>()
  for (const [subpath, target] of Object.entries(packageJson.exports)) {
    if (typeof target === 'string') continue
    entries.set(subpath, `${packageDir}${target.types.replace('./dist/', 'src/').replace(/\.d\.ts$/, '.ts')}`)
  }
  return entries
}

/** The names each entry point exports, by subpath. */
function exportedNames(entries: Map<string, string>): Map<string, string[]> {
  const program = ts.createProgram([...entries.values()], {
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    target: ts.ScriptTarget.ES2022,
    strict: true,
    noEmit: true,
  })
  const checker = program.getTypeChecker()
  const names = new Map<string, string[]>()
  for (const [subpath, file] of entries) {
    const source = program.getSourceFile(file)
    const module = source && checker.getSymbolAtLocation(source)
    if (!module) throw new Error(`entry point ${subpath}: ${file} is not a module`)
    names.set(
      subpath,
      checker.getExportsOfModule(module).map((symbol) => symbol.name),
    )
  }
  return names
}

describe('entry points', () => {
  const names = exportedNames(entryPoints())

  it('keeps the root to what a service needs: at most 15 names', () => {
    expect(names.get('.')?.sort()).toEqual([
      'ConsumedMessage',
      'Database',
      'HandlerDefinition',
      'InvalidMessageError',
      'MessageContract',
      'Messaging',
      'MessagingOptions',
      'ReactionDeps',
      'TransactionClient',
      'createMessaging',
      'enqueue',
      'firstEvent',
      'nextEvent',
      'pgDatabase',
      'prismaDatabase',
    ])
  })

  it('exports each name from one entry point only', () => {
    const where = new Map<string, string[]>()
    for (const [subpath, list] of names) {
      for (const name of list) where.set(name, [...(where.get(name) ?? []), subpath])
    }
    expect([...where].filter(([, subpaths]) => subpaths.length > 1)).toEqual([])
  })

  it('reads every code entry point of package.json', () => {
    expect([...names.keys()].sort()).toEqual(['.', './fastify', './parts', './testing'])
    for (const [subpath, list] of names) expect(list.length, subpath).toBeGreaterThan(0)
  })
})
