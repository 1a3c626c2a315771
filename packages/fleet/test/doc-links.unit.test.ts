import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'

const root = fileURLToPath(new URL('../../../', import.meta.url))

/** The prose of a Markdown document: fenced code blocks blanked out line for line, so line numbers stay true. */
function prose(markdown: string): string[] {
  let fence: string | undefined
  return markdown.split('\n').map((line) => {
    const marker = /^ {0,3}(`{3,}|~{3,})/.exec(line)?.[1]
    if (fence === undefined && marker) {
      fence = marker
      return ''
    }
    if (fence !== undefined) {
      if (marker && marker[0] === fence[0] && marker.length >= fence.length && line.trim() === marker)
        fence = undefined
      return ''
    }
    return line
  })
}

/**
 * GitHub's anchor for a heading's text: inline Markdown reduced to its visible text, lower case, every
 * character but letters, digits, spaces, `-` and `_` dropped, each space a `-` (github-slugger's rules).
 */
function slug(heading: string): string {
  const text = heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/<[^>]+>/g, '')
    .replace(/`/g, '')
  return text
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
    .replace(/ /g, '-')
}

/** Every anchor a document's headings make, a repeated one numbered `-1`, `-2`, ... as GitHub does. */
function anchors(markdown: string): Set<string> {
  const seen = new Map<string, number>()
  const result = new Set<string>()
  for (const line of prose(markdown)) {
    const heading = /^ {0,3}#{1,6}\s+(.*?)(?:\s+#+\s*)?$/.exec(line)?.[1]
    if (heading === undefined) continue
    const base = slug(heading)
    const count = seen.get(base) ?? 0
    seen.set(base, count + 1)
    result.add(count === 0 ? base : `${base}-${count}`)
  }
  return result
}

/** A relative link of a document: where it is (1-based line) and its target as written. */
interface Link {
  line: number
  target: string
}

/** The relative links of a document (inline and reference definitions), outside code blocks and code spans. */
function relativeLinks(markdown: string): Link[] {
  const links: Link[] = []
  prose(markdown).forEach((text, index) => {
    const line = text.replace(/`[^`]*`/g, '')
    const targets = [
      ...[...line.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)].map((m) => m[1]!),
      ...[...line.matchAll(/^ {0,3}\[[^\]]+\]:\s+<?(\S+?)>?(?:\s+.*)?$/g)].map((m) => m[1]!),
    ]
    for (const target of targets)
      if (!/^[a-z][a-z0-9+.-]*:/i.test(target)) links.push({ line: index + 1, target })
  })
  return links
}

/**
 * The broken relative links of the document at `file` (absolute): a target file or folder that does not
 * exist, or an `#anchor` that is no heading of the target Markdown file. `read` reads a file's text.
 * Each is `<file relative to root>:<line>: <target>: <why>`.
 */
function brokenLinks(
  file: string,
  read: (path: string) => string = (path) => readFileSync(path, 'utf8'),
  exists: (path: string) => boolean = existsSync,
): string[] {
  const broken: string[] = []
  for (const { line, target } of relativeLinks(read(file))) {
    const hash = target.indexOf('#')
    const path = decodeURIComponent(hash === -1 ? target : target.slice(0, hash))
    const anchor = hash === -1 ? undefined : decodeURIComponent(target.slice(hash + 1))
    const resolved =
      path === '' ? file : resolve(dirname(file), path.startsWith('/') ? join(root, path) : path)
    const where = `${relative(root, file)}:${line}: ${target}`
    if (!exists(resolved)) {
      broken.push(`${where}: ${relative(root, resolved)} does not exist`)
      continue
    }
    if (anchor === undefined || anchor === '') continue
    if (!resolved.endsWith('.md')) {
      broken.push(`${where}: #${anchor} points into a file that is not Markdown`)
      continue
    }
    if (!anchors(read(resolved)).has(anchor))
      broken.push(`${where}: #${anchor} is no heading of ${relative(root, resolved)}`)
  }
  return broken
}

/** README.md and every Markdown file directly in docs/. */
function documents(): string[] {
  const docs = join(root, 'docs')
  return [
    join(root, 'README.md'),
    ...readdirSync(docs)
      .filter((name) => name.endsWith('.md') && statSync(join(docs, name)).isFile())
      .sort()
      .map((name) => join(docs, name)),
  ]
}

describe('relative links of README.md and docs/*.md', () => {
  it('when a heading holds code, links, punctuation or repeats, then its anchor is the one GitHub makes', () => {
    expect(slug('Stopping, and a service that dies')).toBe('stopping-and-a-service-that-dies')
    expect(slug('Profile `observability`')).toBe('profile-observability')
    expect(slug('Overload and several processes (targets 3 and 5)')).toBe(
      'overload-and-several-processes-targets-3-and-5',
    )
    expect(slug('Levers 1-5 together, on a quiet machine (2026-11-30 evening)')).toBe(
      'levers-1-5-together-on-a-quiet-machine-2026-11-30-evening',
    )
    expect(slug('RabbitMQ 3.10 and 4.x')).toBe('rabbitmq-310-and-4x')
    expect(slug('Health: which probe means what')).toBe('health-which-probe-means-what')
    expect(slug('See [the CLI](cli.md) & co')).toBe('see-the-cli--co')
    expect(slug('DATABASE_URL')).toBe('database_url')
    expect([...anchors('# A\n\n## Traces\n\n```sh\n# not a heading\n```\n\n### Traces\n')]).toEqual([
      'a',
      'traces',
      'traces-1',
    ])
  })

  it('when a document links to a missing file or a heading its target lacks, then each broken link is named', () => {
    const files: Record<string, string> = {
      [join(root, 'docs/a.md')]: [
        '# A',
        '## Kept',
        'Fine: [b](b.md#the-heading), [self](#kept), [folder](events/), [web](https://example.com/x#y).',
        'Broken: [gone](missing.md), [no heading](b.md#nowhere), [self](#lost).',
        '`[in code](nope.md)`',
        '```md',
        '[in a block](nope.md)',
        '```',
        '[ref]: ../README.md#nothing-here',
      ].join('\n'),
      [join(root, 'docs/b.md')]: '# The heading\n',
      [join(root, 'README.md')]: '# Top\n',
      [join(root, 'docs/events')]: '',
    }
    const broken = brokenLinks(
      join(root, 'docs/a.md'),
      (path) => files[path] ?? '',
      (path) => path in files,
    )
    expect(broken).toEqual([
      'docs/a.md:4: missing.md: docs/missing.md does not exist',
      'docs/a.md:4: b.md#nowhere: #nowhere is no heading of docs/b.md',
      'docs/a.md:4: #lost: #lost is no heading of docs/a.md',
      'docs/a.md:9: ../README.md#nothing-here: #nothing-here is no heading of README.md',
    ])
  })

  for (const file of documents())
    it(`when ${relative(root, file)} is read, then every relative link leads to a file and every #anchor to a heading`, () => {
      expect(brokenLinks(file)).toEqual([])
    })
})
