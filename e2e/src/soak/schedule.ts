import { SERVICES, type ServiceName } from '../run.js'
import { Random } from './random.js'

/** The kinds of fault a soak can fire (the menu: `FAULT_MENU`). */
export type FaultKind =
  'kill' | 'stop' | 'broker-close' | 'broker-cut' | 'db-terminate' | 'queue-delete' | 'postgres-restart'

/** One entry of the menu: what the fault does, and whether a soak fires it unless told otherwise. */
export interface MenuEntry {
  kind: FaultKind
  /** On in a soak that names no faults. */
  byDefault: boolean
  does: string
  /** Why an entry is off by default. */
  offBecause?: string
}

/** The documented fault menu, in the order the report lists it (docs/operations.md repeats it). */
export const FAULT_MENU: readonly MenuEntry[] = [
  {
    kind: 'kill',
    byDefault: true,
    does: 'kill -9 one service process, start it again after 1-8 s, wait until it is ready',
  },
  {
    kind: 'stop',
    byDefault: true,
    does: 'SIGSTOP one service process for 10 s, then SIGCONT (a frozen process: GC pause, noisy neighbour)',
  },
  {
    kind: 'broker-close',
    byDefault: true,
    does:
      "rabbitmqctl close_connection on one service's broker connections (relay and consumer), or on " +
      "all of the fleet's, found by the fleet's own connection names and ports",
  },
  {
    kind: 'broker-cut',
    byDefault: true,
    does: "cut the fleet's link to the broker for 2-8 s (every socket closed, connects refused), then restore it",
  },
  {
    kind: 'db-terminate',
    byDefault: true,
    does: "pg_terminate_backend on every session of one service's database, or of all four",
  },
  {
    kind: 'queue-delete',
    byDefault: false,
    does: "delete one of the fleet's queues (a handler queue or the timeline recorder's), messages in it included",
    offBecause:
      "the timeline recorder's queue is never declared again (its facts then park as NO_ROUTE where no " +
      'other queue is bound), and a fact published while one of its queues is missing is routed to the ' +
      'others only, so that handler never sees it and its order stays PENDING or unbalanced; opt in with ' +
      '--faults to reproduce',
  },
  {
    kind: 'postgres-restart',
    byDefault: false,
    does: 'run --postgres-restart-command (e.g. pg_ctlcluster 17 main restart): every database session of everyone cut',
    offBecause: 'it restarts a server others may be using; only on a machine of your own',
  },
]

/** The kinds a soak fires when it names none. */
export const DEFAULT_FAULTS: readonly FaultKind[] = FAULT_MENU.filter((e) => e.byDefault).map((e) => e.kind)

/** One fault of a schedule, with everything random about it decided from the seed. */
export interface PlannedFault {
  /** Planned start, s after the load began; a fault never starts before the previous one ended. */
  atS: number
  kind: FaultKind
  /** The service it hits, or `all` (broker-close, db-terminate); the whole fleet for broker-cut and postgres-restart. */
  target: ServiceName | 'all'
  /** How long the fault holds, ms: kill (down), stop (frozen), broker-cut (link down); 0 for the others. */
  holdMs: number
  /** queue-delete: which of the fleet's queues (index into their sorted names, modulo their count). */
  pick: number
}

/** What a schedule is made from; the same options and seed give the same schedule. */
export interface ScheduleOptions {
  seed: number
  /** Length of the load, s; no fault is planned after it. */
  durationS: number
  /** Kinds to fire; each round fires every one of them once, in a shuffled order. */
  faults: readonly FaultKind[]
  /** Quiet time before the first fault, s (default 15). */
  warmupS?: number
  /** Gap between two faults, s, drawn in [min, max] (default 8-20). */
  gapS?: { min: number; max: number }
  /**
   * Plan exactly this many rounds, however long they take, instead of rounds until `durationS`
   * (a short soak that must see every kind once: `rounds: 1`).
   */
  rounds?: number
}

/**
 * The fault schedule of a soak: rounds in which every kind of `faults` fires once in a shuffled
 * order, `gapS` apart, from `warmupS` until `durationS` (or `rounds` of them, however long). A pure
 * function of its options, so `--seed` replays a run's schedule exactly (targets, hold times and order); only when each fault
 * actually ends depends on the machine.
 * @throws Error when `faults` is empty
 */
export function planFaults(options: ScheduleOptions): PlannedFault[] {
  if (options.faults.length === 0) throw new Error('no faults to plan: name at least one kind')
  const rng = new Random(options.seed)
  const gap = options.gapS ?? { min: 8, max: 20 }
  const plan: PlannedFault[] = []
  const inTime = (atS: number) => options.rounds !== undefined || atS < options.durationS
  let atS = options.warmupS ?? 15
  for (let round = 0; inTime(atS) && round < (options.rounds ?? Infinity); round++) {
    for (const kind of rng.shuffled(options.faults)) {
      if (!inTime(atS)) break
      plan.push({ atS, kind, ...target(kind, rng) })
      atS += rng.int(gap.min, gap.max)
    }
  }
  return plan
}

function target(kind: FaultKind, rng: Random): Omit<PlannedFault, 'atS' | 'kind'> {
  const service = rng.pick(SERVICES)
  const pick = rng.int(0, 1_000)
  switch (kind) {
    case 'kill':
      return { target: service, holdMs: rng.int(1_000, 8_000), pick }
    case 'stop':
      return { target: service, holdMs: 10_000, pick }
    case 'broker-cut':
      return { target: 'all', holdMs: rng.int(2_000, 8_000), pick }
    case 'broker-close':
    case 'db-terminate':
      return { target: rng.chance(0.25) ? 'all' : service, holdMs: 0, pick }
    case 'queue-delete':
      return { target: service, holdMs: 0, pick }
    case 'postgres-restart':
      return { target: 'all', holdMs: 0, pick }
  }
}

/**
 * The kinds named in `--faults` (comma-separated; `default` stands for `DEFAULT_FAULTS`).
 * Example: `parseFaultList('default,queue-delete')`.
 * @throws Error naming an unknown kind and listing the menu
 */
export function parseFaultList(text: string): FaultKind[] {
  const kinds = new Set<FaultKind>()
  for (const name of text
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)) {
    if (name === 'default') DEFAULT_FAULTS.forEach((k) => kinds.add(k))
    else if (FAULT_MENU.some((e) => e.kind === name)) kinds.add(name as FaultKind)
    else throw new Error(`unknown fault "${name}"; the menu: ${FAULT_MENU.map((e) => e.kind).join(', ')}`)
  }
  return [...kinds]
}
