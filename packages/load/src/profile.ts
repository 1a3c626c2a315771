/** Where a process's CPU went, from a V8 profile written by `node --cpu-prof`. Pure; no I/O. */

/** The parts of a `.cpuprofile` (Chrome DevTools protocol `Profiler.Profile`) read here. */
export interface CpuProfile {
  nodes: Array<{ id: number; callFrame: { functionName: string; url: string; lineNumber: number } }>
  samples: number[]
  /** Microseconds since the previous sample, one per sample. */
  timeDeltas: number[]
}

/**
 * The package a script belongs to: `pg` or `@prisma/client` under node_modules, `messaging` or
 * `order` for a workspace, `node:<module>` for Node's own JavaScript, and V8's pseudo-frames
 * (`(garbage collector)`, `(program)`: native code outside JavaScript) by name.
 */
export function packageOf(url: string, functionName: string): string {
  if (url === '') return functionName.startsWith('(') ? functionName : '(native)'
  const modules = /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url)
  if (modules) return modules[1]!
  const workspace = /\/(?:packages|services)\/([^/]+)\//.exec(url)
  if (workspace) return `workspace:${workspace[1]}`
  if (url.startsWith('node:')) return `node:${url.slice(5).split('/')[1] ?? url.slice(5)}`
  return url
}

/** Self time per package and per function of one profile, µs; idle time is left out. */
export function summarize(profile: CpuProfile) {
  const byId = new Map(profile.nodes.map((n) => [n.id, n.callFrame]))
  const packages = new Map<string, number>()
  const functions = new Map<string, number>()
  let busy = 0
  profile.samples.forEach((id, i) => {
    const frame = byId.get(id)
    const delta = profile.timeDeltas[i] ?? 0
    if (!frame || frame.functionName === '(idle)') return
    busy += delta
    const pkg = packageOf(frame.url, frame.functionName)
    packages.set(pkg, (packages.get(pkg) ?? 0) + delta)
    const name = `${frame.functionName || '(anonymous)'} ${pkg}${frame.url ? `:${frame.lineNumber + 1}` : ''}`
    functions.set(name, (functions.get(name) ?? 0) + delta)
  })
  const top = (map: Map<string, number>, n: number) => [...map].sort((a, b) => b[1] - a[1]).slice(0, n)
  return { busy, packages: top(packages, 14), functions: top(functions, 12) }
}
