import { randomUUID } from 'node:crypto'
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { createClient as createHeyApiClient } from '@hey-api/openapi-ts'
import openapiTS, { astToString, type OpenAPI3 } from 'openapi-typescript'
import ts from 'typescript'

const require = createRequire(import.meta.url)

/**
 * Generates the TypeScript types of a client from `document` (an OpenAPI 3 document, as a service
 * serves it at /documentation/json) with openapi-typescript, and type-checks `usage` against them
 * (strict) with the TypeScript openapi-typescript 7 supports (5.9; the repository builds with 6). `usage` is a module that imports the generated types
 * from `./api.js` (`paths`, `components`, `operations` keyed by operationId) and the typed fetch
 * client `openapi-fetch`, e.g. `createClient<paths>().POST('/orders', { body })`.
 * Returns TypeScript's diagnostics, one line each (`usage.ts(12,5): Property 'x' is missing ...`):
 * empty when the use type-checks. The files are written under node_modules/.cache and removed.
 */
export async function typecheckOpenApiClient(document: object, usage: string): Promise<string[]> {
  return typecheckAgainst(astToString(await openapiTS(document as OpenAPI3)), usage)
}

/**
 * Like `typecheckOpenApiClient`, with the types @hey-api/openapi-ts generates (its
 * `@hey-api/typescript` plugin: `types.gen.ts`, a type per component schema, e.g. `Order`) as
 * `./api.js`. Returns TypeScript's diagnostics; empty when `usage` type-checks.
 */
export async function typecheckHeyApiTypes(document: object, usage: string): Promise<string[]> {
  const out = mkdtempSync(path.join(tmpdir(), 'hey-api-'))
  try {
    await createHeyApiClient({
      input: structuredClone(document) as never,
      output: out,
      plugins: ['@hey-api/typescript'],
      logs: { level: 'silent' },
    })
    return typecheckAgainst(readFileSync(path.join(out, 'types.gen.ts'), 'utf8'), usage)
  } finally {
    rmSync(out, { recursive: true, force: true })
  }
}

/** Type-checks `usage` (strict) with `types` as its `./api.js`; TypeScript's diagnostics, one line each. */
function typecheckAgainst(types: string, usage: string): string[] {
  // Beside the node_modules that holds openapi-fetch, so `import createClient from 'openapi-fetch'`
  // resolves as it would in a project.
  const nodeModules = path.resolve(path.dirname(require.resolve('openapi-fetch/package.json')), '..')
  const dir = path.join(nodeModules, '.cache', 'openapi-client-check', randomUUID())
  mkdirSync(dir, { recursive: true })
  try {
    writeFileSync(path.join(dir, 'api.ts'), types)
    const file = path.join(dir, 'usage.ts')
    writeFileSync(file, usage)
    writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ type: 'module' }))
    const program = ts.createProgram([file], {
      strict: true,
      noUncheckedIndexedAccess: true,
      noEmit: true,
      target: ts.ScriptTarget.ES2023,
      lib: ['lib.es2023.d.ts', 'lib.dom.d.ts'],
      module: ts.ModuleKind.NodeNext,
      moduleResolution: ts.ModuleResolutionKind.NodeNext,
      skipLibCheck: true,
      types: [],
    })
    return ts.getPreEmitDiagnostics(program).map((d) => {
      const text = ts.flattenDiagnosticMessageText(d.messageText, ' ')
      if (!d.file || d.start === undefined) return text
      const { line, character } = d.file.getLineAndCharacterOfPosition(d.start)
      return `${path.basename(d.file.fileName)}(${line + 1},${character + 1}): ${text}`
    })
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

/**
 * A `usage` module for `typecheckOpenApiClient` over the generated client: it imports `createClient`
 * (openapi-fetch) and the document's `components`, `operations` and `paths` types, declares
 * `const client = createClient<paths>({ baseUrl })` (default http://127.0.0.1), then `body`, which
 * uses them.
 */
export function clientModule(body: string, baseUrl = 'http://127.0.0.1'): string {
  return [
    "import createClient from 'openapi-fetch'",
    "import type { components, operations, paths } from './api.js'",
    '',
    `const client = createClient<paths>({ baseUrl: '${baseUrl}' })`,
    body,
  ].join('\n')
}

/** One operation of an OpenAPI document: its method, path and what the document says of it. */
export interface DocumentedOperation {
  method: string
  path: string
  operationId: string | undefined
  responses: Record<string, { headers?: Record<string, unknown> }>
}

const METHODS = new Set(['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'])

/** Every operation of `document`, in the document's order. */
export function operationsOf(document: {
  paths?: Record<string, Record<string, unknown>>
}): DocumentedOperation[] {
  return Object.entries(document.paths ?? {}).flatMap(([route, item]) =>
    Object.entries(item)
      .filter(([method]) => METHODS.has(method))
      .map(([method, operation]) => {
        const op = operation as Pick<DocumentedOperation, 'operationId' | 'responses'>
        return { method, path: route, operationId: op.operationId, responses: op.responses ?? {} }
      }),
  )
}
