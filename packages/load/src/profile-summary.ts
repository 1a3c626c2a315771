// `node packages/load/dist/profile-summary.js <dir-or-file.cpuprofile>...`: where a process's CPU
// went, from V8 profiles written by `node --cpu-prof`. Prints, per profile, the busy time (idle
// left out), the share per package (node_modules package, workspace, node internals, GC) and the
// functions with the most self time.
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { basename, join } from 'node:path'
import { summarize, type CpuProfile } from './profile.js'
import { fmt } from './stats.js'

const files = process.argv.slice(2).flatMap((arg) =>
  statSync(arg).isDirectory()
    ? readdirSync(arg)
        .filter((f) => f.endsWith('.cpuprofile'))
        .map((f) => join(arg, f))
    : [arg],
)
if (files.length === 0) {
  console.error('usage: node packages/load/dist/profile-summary.js <dir or .cpuprofile>...')
  process.exit(2)
}
for (const file of files) {
  const { busy, packages, functions } = summarize(JSON.parse(readFileSync(file, 'utf8')) as CpuProfile)
  const share = (us: number) => `${fmt((us / busy) * 100, 1)} %`
  console.log(`\n${basename(file)}: ${fmt(busy / 1e6, 2)} s busy`)
  console.log(`  by package: ${packages.map(([name, us]) => `${name} ${share(us)}`).join(', ')}`)
  for (const [name, us] of functions) console.log(`  ${share(us).padStart(7)}  ${name}`)
}
