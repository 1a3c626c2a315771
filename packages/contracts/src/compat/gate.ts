/**
 * The compatibility gate (`npm run contracts:check`): compares every released event type (the
 * corpus in packages/contracts/compat/released/) with the same type in the working tree, and
 * refuses what would break a rolling upgrade for the consumers the saga map names. A breaking change
 * belongs in a new version (`order.created.v2`, a new type beside the old one), which the gate
 * treats as new and lets through.
 */
import type { EventContract } from '../define.js'
import { eventJsonSchema } from '../json-schema.js'
import { readsOf, type Reaction, type ServiceName } from '../saga-map.js'
import {
  diffSchemas,
  type ChangeKind,
  type Direction,
  type JsonSchema,
  type SchemaChange,
} from './schema-diff.js'

/** The last release: each released type's JSON Schema and the payloads captured of it. */
export interface ReleasedCorpus {
  /** Event type (`order.created.v1`) -> its JSON Schema as released (docs/events at the release). */
  schemas: ReadonlyMap<string, JsonSchema>
  /** Event type -> real payloads of it (the `data` of captured messages). */
  payloads: ReadonlyMap<string, readonly unknown[]>
}

/** The working tree the gate judges: its events and the saga map's view of them. */
export interface WorkingTree {
  events: readonly EventContract[]
  reactions: readonly Reaction[]
  producers: Readonly<Record<ServiceName, readonly EventContract[]>>
}

/** A change the gate refuses, with everything its message says. */
export interface Refusal {
  type: string
  /** Field path (`lines[].sku`), `` for the whole payload. */
  path: string
  kind: ChangeKind | 'event-removed' | 'payload-refused' | 'upcast-refused'
  breaks: Direction[]
  detail: string
  /** The handlers that would fail, `<service>/<handler>`, from the saga map. */
  consumers: string[]
  /** The service that publishes the type, when the map names one. */
  producer: string | undefined
}

/** Who reads one version of an event that the working tree declares in several versions. */
export interface VersionReaders {
  type: string
  /** `<service>/<handler>` of every reaction that reads the type, directly or through an upcaster. */
  consumers: string[]
  /**
   * Consumers of another version of the same event that do not read this one: they hold its
   * messages (@saga/messaging holds a newer version it does not know), so its producer must not
   * switch to it before they read it.
   */
  notReadBy: string[]
}

/** What the gate found: the refusals, and the compatible changes and new types it let through. */
export interface GateReport {
  refusals: Refusal[]
  accepted: Array<{ type: string; change: SchemaChange }>
  /** Types in the working tree that were never released (a new event, or a new version). */
  newTypes: string[]
  /** For each event declared in several versions, who reads each version (in declaration order). */
  versions: VersionReaders[]
}

/**
 * Runs the gate: for every released type, the schema diff against the working tree's schema of
 * that type (each change that breaks a direction is refused when the type has a consumer), and each
 * captured payload parsed by the working tree's zod schema (a refused payload is a message an old
 * producer really wrote that a new consumer would dead-letter).
 * @throws UnsupportedSchemaError when a schema uses a construct the classifier does not judge
 */
export function runGate(released: ReleasedCorpus, tree: WorkingTree): GateReport {
  const report: GateReport = { refusals: [], accepted: [], newTypes: [], versions: [] }
  const current = new Map(tree.events.map((event) => [event.type, event]))
  for (const [type, schema] of released.schemas) {
    const consumers = consumersOf(type, tree.reactions)
    const producer = producerOf(type, tree.producers)
    const refuse = (r: Pick<Refusal, 'path' | 'kind' | 'breaks' | 'detail'>) =>
      report.refusals.push({ type, consumers, producer, ...r })
    const event = current.get(type)
    if (event === undefined) {
      refuse({
        path: '',
        kind: 'event-removed',
        breaks: ['readers', 'writers'],
        detail: 'no longer declared',
      })
      continue
    }
    for (const change of diffSchemas(schema, eventJsonSchema(event))) {
      if (change.breaks.length > 0 && consumers.length > 0) refuse(change)
      else report.accepted.push({ type, change })
    }
    const payloads = released.payloads.get(type) ?? []
    for (const { path, message, count } of payloadIssues(event, payloads)) {
      refuse({
        path,
        kind: 'payload-refused',
        breaks: ['writers'],
        detail: `${count} of ${payloads.length} captured payloads: ${message}`,
      })
    }
  }
  report.refusals.push(...upcastRefusals(released, tree))
  const releasedTypes = new Set(released.schemas.keys())
  report.newTypes = tree.events.map((e) => e.type).filter((type) => !releasedTypes.has(type))
  report.versions = versionReaders(tree)
  return report
}

/**
 * The upcasters of the saga map judged on the corpus: every captured payload of an upcaster's `from`
 * type that its own schema takes is upcast, and the result must parse by the schema of the version
 * the reaction reacts to; otherwise the consumer would dead-letter what the released producer wrote.
 * One refusal per reaction, upcaster and distinct issue (an upcaster that throws is one issue).
 */
function upcastRefusals(released: ReleasedCorpus, tree: WorkingTree): Refusal[] {
  const refusals: Refusal[] = []
  for (const reaction of tree.reactions) {
    for (const upcaster of reaction.alsoReads ?? []) {
      const from = upcaster.from.type
      const taken = (released.payloads.get(from) ?? []).flatMap((payload) => {
        const parsed = upcaster.from.schema.safeParse(payload)
        return parsed.success ? [parsed.data] : []
      })
      const upcast = taken.map((payload) => {
        try {
          return upcaster.upcast(payload)
        } catch (error) {
          return new UpcastThrew((error as Error).message)
        }
      })
      const who = `${reaction.service}/${reaction.handler}`
      for (const { path, message, count } of payloadIssues(reaction.reactsTo, upcast)) {
        refusals.push({
          type: reaction.reactsTo.type,
          path,
          kind: 'upcast-refused',
          breaks: ['writers'],
          detail: `${count} of ${taken.length} captured ${from} payloads, upcast by ${who}: ${message}`,
          consumers: [who],
          producer: producerOf(reaction.reactsTo.type, tree.producers),
        })
      }
    }
  }
  return refusals
}

/** An upcaster's exception, standing in for its output so `payloadIssues` reports it as an issue. */
class UpcastThrew {
  constructor(readonly message: string) {}
}

/** `versions` of the report: who reads each version of every event declared in more than one. */
function versionReaders(tree: WorkingTree): VersionReaders[] {
  const byKey = new Map<string, string[]>()
  for (const event of tree.events)
    byKey.set(event.routingKey, [...(byKey.get(event.routingKey) ?? []), event.type])
  return [...byKey.values()]
    .filter((types) => types.length > 1)
    .flatMap((types) => {
      const readersOfAny = [...new Set(types.flatMap((type) => consumersOf(type, tree.reactions)))]
      return types.map((type) => {
        const consumers = consumersOf(type, tree.reactions)
        return { type, consumers, notReadBy: readersOfAny.filter((c) => !consumers.includes(c)) }
      })
    })
}

/**
 * The distinct zod issues of the captured payloads under the working tree's schema: field path (a
 * list index written `[]`), message, and how many payloads have it.
 */
function payloadIssues(
  event: EventContract,
  payloads: readonly unknown[],
): Array<{ path: string; message: string; count: number }> {
  const issues = new Map<string, { path: string; message: string; count: number }>()
  for (const payload of payloads) {
    const found =
      payload instanceof UpcastThrew
        ? [{ path: [], message: `the upcaster threw: ${payload.message}` }]
        : (event.schema.safeParse(payload).error?.issues ?? [])
    for (const issue of found) {
      const path = issue.path
        .map((p) => (typeof p === 'number' ? '[]' : String(p)))
        .join('.')
        .replaceAll('.[]', '[]')
      const key = JSON.stringify([path, issue.message])
      const seen = issues.get(key) ?? { path, message: issue.message, count: 0 }
      seen.count++
      issues.set(key, seen)
    }
  }
  return [...issues.values()]
}

/**
 * `<service>/<handler>` of every reaction that reads `type`, in map order: the reactions to it and
 * those that upcast it to a newer version (`readsOf`); each validates the payloads of every type it
 * reads (recorders included).
 */
export const consumersOf = (type: string, reactions: readonly Reaction[]): string[] => [
  ...new Set(
    reactions
      .filter((r) => readsOf(r).some((read) => read.type === type))
      .map((r) => `${r.service}/${r.handler}`),
  ),
]

const producerOf = (
  type: string,
  producers: Readonly<Record<ServiceName, readonly EventContract[]>>,
): string | undefined =>
  (Object.keys(producers) as ServiceName[]).find((s) => producers[s].some((e) => e.type === type))

/** The next version of a type: `order.created.v1` -> `order.created.v2`. */
export const nextVersion = (type: string): string =>
  type.replace(/\.v(\d+)$/, (_, n: string) => `.v${Number(n) + 1}`)

/** What each kind of refusal asks the developer to do, besides publishing a new version. */
const ALTERNATIVE: Record<Refusal['kind'], string> = {
  'field-added': 'or make the field optional (`.optional()`), so messages without it still parse',
  'made-required': 'or keep the field optional, so messages without it still parse',
  'field-removed': 'or keep the field declared (optional, if producers may stop writing it)',
  'made-optional': 'or keep the field required until no released consumer needs it',
  'type-changed': 'or keep the released type and add the new form as a new optional field',
  'type-narrowed': 'or keep the released type',
  'type-widened': 'or keep the released type',
  'enum-values-added':
    'or keep the released values (an open set belongs in a pattern-checked string, like the reasons)',
  'enum-values-removed': 'or keep the released values accepted',
  'constraint-tightened': 'or keep the released constraint',
  'constraint-loosened': 'or keep the released constraint',
  'additional-properties-closed': 'or leave the object open to fields it does not declare',
  'additional-properties-opened': 'or keep the object closed',
  'event-removed':
    'keep it declared until no running build publishes or consumes it, then cut a release of the corpus without it',
  'payload-refused': 'or relax the schema so the released producer’s messages parse',
  'upcast-refused':
    'fix the upcaster (or the new version’s schema) so every payload of the older version upcasts to one the new schema takes',
}

/** Who a broken direction hurts, in words. */
const HARM: Record<Direction, string> = {
  readers: 'consumers still on the released schema refuse what the new producer writes (dead-lettered)',
  writers:
    'consumers on the new schema refuse what the released producer writes and what is queued (dead-lettered)',
}

/**
 * Who a refusal hurts in one direction. An optional field removed is still accepted by a consumer on
 * the released build, but no longer written for it: its handler may read it (the saga map does not
 * say which fields a handler reads, so every removal counts).
 */
const harmOf = (r: Refusal, direction: Direction): string =>
  r.kind === 'field-removed' && direction === 'readers' && r.detail.includes('optional')
    ? 'consumers still on the released schema no longer get a field their handlers may read'
    : HARM[direction]

/**
 * The gate's verdict for people: one block per refusal (event, field path, the change, who breaks,
 * what to do), then a summary line. Ends with a newline.
 */
export function formatReport(report: GateReport): string {
  const lines: string[] = []
  for (const r of report.refusals) {
    const where = r.path === '' ? '(payload)' : r.path
    lines.push(`✗ ${r.type} ${where}: ${r.kind.replaceAll('-', ' ')} (${r.detail})`)
    for (const direction of r.breaks) lines.push(`    breaks: ${harmOf(r, direction)}`)
    lines.push(`    consumers: ${r.consumers.join(', ') || 'none in the saga map'}`)
    if (r.producer !== undefined) lines.push(`    producer: ${r.producer}`)
    if (r.kind === 'event-removed' || r.kind === 'upcast-refused')
      lines.push(`    do: ${ALTERNATIVE[r.kind]}`)
    else {
      lines.push(
        `    do: publish it as ${nextVersion(r.type)} beside ${r.type}, with an upcaster from ${r.type} for consumers that move;`,
        `        ${ALTERNATIVE[r.kind]}`,
      )
    }
  }
  const released = new Set(report.accepted.map((a) => a.type))
  for (const { type, change } of report.accepted) {
    lines.push(
      `✓ ${type} ${change.path || '(payload)'}: ${change.kind.replaceAll('-', ' ')} (${change.detail})`,
    )
  }
  for (const type of report.newTypes) lines.push(`✓ ${type}: new, not released yet`)
  for (const { type, consumers, notReadBy } of report.versions) {
    const held = notReadBy.length > 0 ? `; not read by ${notReadBy.join(', ')} (held there)` : ''
    lines.push(`• ${type} read by ${consumers.join(', ') || 'no consumer in the saga map'}${held}`)
  }
  const refused = new Set(report.refusals.map((r) => r.type))
  lines.push(
    report.refusals.length === 0
      ? `contracts:check: compatible with the released corpus (${released.size} event types changed compatibly, ${report.newTypes.length} new)`
      : `contracts:check: ${report.refusals.length} breaking change(s) in ${[...refused].join(', ')}`,
  )
  return `${lines.join('\n')}\n`
}
