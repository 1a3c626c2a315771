/**
 * The contract of @saga/messaging: the shapes producers, consumers and the relay share.
 * Nothing here knows a specific event; contracts live in another package.
 */

/**
 * A schema in the Standard Schema v1 shape (https://standardschema.dev), which zod 4 implements.
 * Messaging validates consumed payloads through it without depending on zod.
 */
export interface StandardSchemaV1<Input = unknown, Output = Input> {
  readonly '~standard': {
    readonly version: 1
    readonly vendor: string
    readonly validate: (
      value: unknown,
    ) => StandardSchemaV1.Result<Output> | Promise<StandardSchemaV1.Result<Output>>
    readonly types?: { readonly input: Input; readonly output: Output } | undefined
  }
}

// eslint-disable-next-line @typescript-eslint/no-namespace
export declare namespace StandardSchemaV1 {
  type Result<Output> =
    { readonly value: Output; readonly issues?: undefined } | { readonly issues: ReadonlyArray<Issue> }
  interface Issue {
    readonly message: string
    readonly path?: ReadonlyArray<PropertyKey | { readonly key: PropertyKey }> | undefined
  }
  type InferOutput<S extends StandardSchemaV1> = NonNullable<S['~standard']['types']>['output']
}

/**
 * One message type as producers and consumers know it: a versioned type name, the routing key it
 * is published under, and the schema of its payload.
 * Example: `{ type: 'order.created.v1', routingKey: 'order.created', schema: OrderCreatedSchema }`.
 */
export interface MessageContract<P = unknown> {
  readonly type: string
  readonly routingKey: string
  readonly schema: StandardSchemaV1<unknown, P>
  /**
   * The URI of the payload's published schema (e.g. a JSON Schema's `$id`), sent as CloudEvents
   * `dataschema` by `firstEvent` and `nextEvent`. Optional.
   */
  readonly dataschema?: string | undefined
  /**
   * `'per-key'`: every event of this contract takes the next sequence number of its aggregate id
   * at `firstEvent`/`nextEvent` + `enqueue` (as `OutgoingMessage.orderingKey`), so a handler with
   * `ordering: 'per-key'` handles one key's events in the producer's commit order.
   */
  readonly ordering?: 'per-key' | undefined
}

/**
 * What a producer hands to `enqueue`. The message id (UUIDv7) is made by `enqueue`, once, and
 * travels as AMQP `messageId` and CloudEvents `id`.
 */
export interface OutgoingMessage<P = unknown> {
  /** Versioned type name, e.g. `order.created.v1`. */
  type: string
  /** Topic routing key, e.g. `order.created`. */
  routingKey: string
  /** The event data; serialised as JSON. */
  payload: P
  /** The entity the event is about (e.g. the order id); stored for look-ups, sent as CloudEvents `subject`. */
  aggregateId?: string | undefined
  /** Ties every message of one business process together (e.g. the order id). */
  correlationId: string
  /** The id of the message that caused this one; absent for a message caused by an HTTP request. */
  causationId?: string | undefined
  /** W3C trace context (https://www.w3.org/TR/trace-context/#traceparent-header). */
  traceparent?: string | undefined
  /** When the fact happened (caller's clock), published as CloudEvents `time`. Default: the database's `now()`. */
  occurredAt?: Date | undefined
  /** The URI of the payload's schema, published as CloudEvents `dataschema`. */
  dataschema?: string | undefined
  /**
   * Sequence this message per key: `enqueue` takes the next number of (routing key, this key) in
   * the caller's transaction (table `ordering_sequence`), sent as CloudEvents `partitionkey` and
   * `sequence`, so handlers with `ordering: 'per-key'` handle the key's messages in commit order.
   * Absent: no number, no cost.
   */
  orderingKey?: string | undefined
}

/**
 * The envelope on the wire: a CloudEvents 1.0 structured-mode JSON body with the extension
 * attributes `correlationid`, `causationid` and `traceparent`, published with AMQP content type
 * `application/cloudevents+json` (the AMQP binding's structured mode).
 */
export interface Envelope<P = unknown> {
  specversion: '1.0'
  id: string
  source: string
  type: string
  /** Always set by this package's producers; optional in CloudEvents, so a consumer may get none. */
  time?: string | undefined
  subject?: string | undefined
  /** Always `application/json` from this package's producers; absent means JSON too. */
  datacontenttype?: string | undefined
  dataschema?: string | undefined
  /** Always set by this package's producers; see `parseDelivery` for a message without one. */
  correlationid?: string | undefined
  causationid?: string | undefined
  traceparent?: string | undefined
  /** W3C `tracestate` (vendor trace data) beside `traceparent`, when the producer's context had one. */
  tracestate?: string | undefined
  /** CloudEvents Partitioning extension: the key a sequenced message is ordered by. */
  partitionkey?: string | undefined
  /** CloudEvents Sequence extension: the message's number within its key, 20 zero-padded decimal digits. */
  sequence?: string | undefined
  data: P
}

/** A consumed, validated message as a handler sees it. */
export interface ConsumedMessage<P = unknown> {
  id: string
  /** The type that came over the wire: an older version's when an `Upcaster` made the payload. */
  type: string
  source: string
  /** When the fact happened (CloudEvents `time`). */
  time: Date
  subject?: string | undefined
  correlationId: string
  causationId?: string | undefined
  traceparent?: string | undefined
  /** W3C `tracestate` that came with `traceparent`, if any. */
  tracestate?: string | undefined
  routingKey: string
  payload: P
  /** 1 on the first delivery to this handler, counting retries after handler errors. */
  attempt: number
  /** The producer's key and sequence number (1, 2, ...) of a sequenced message (`orderingKey`). */
  ordering?: { key: string; sequence: number } | undefined
}

/**
 * A transaction a handler or producer writes in. Messaging accepts either a Prisma interactive
 * transaction client (anything with `$executeRawUnsafe`/`$queryRawUnsafe` and no `$connect`) or a
 * `pg` client inside `BEGIN`.
 */
export interface PrismaTransactionLike {
  $executeRawUnsafe(query: string, ...values: unknown[]): Promise<number>
  $queryRawUnsafe<T = unknown>(query: string, ...values: unknown[]): Promise<T>
}

export interface PgClientLike {
  query(text: string, values?: unknown[]): Promise<{ rowCount: number | null; rows: unknown[] }>
}

export type TransactionClient = PrismaTransactionLike | PgClientLike

/**
 * How messaging opens a transaction in the service's database: commits when `fn` resolves, rolls
 * back when it throws (`prismaDatabase`, `pgDatabase`). On the client of a `pgDatabase` transaction
 * whose `fn` runs (`deferredToCommit`, database.ts), `enqueue` sends its INSERT with the COMMIT (the
 * row cannot be read back inside; a failing INSERT fails the COMMIT) and, with publish on commit,
 * this process publishes the row; on any other client the INSERT runs at once and the relay's sweep
 * publishes it. Both give the same rows and at-least-once publishing.
 */
export interface Database<Tx extends TransactionClient> {
  transaction<T>(fn: (tx: Tx) => Promise<T>): Promise<T>
  /**
   * Optional, a cheaper `transaction` for the inbox: opens it with the inbox INSERT of `entry` (`...
   * ON CONFLICT DO NOTHING`) and runs `fn` only when the pair is new; `{ fresh: false }` when it was
   * already recorded (nothing written). Errors as `transaction`. Absent: the consumer runs the
   * INSERT as the first statement of `transaction`.
   */
  inboxTransaction?<T>(entry: InboxEntry, fn: (tx: Tx) => Promise<T>): Promise<InboxOutcome<T>>
  /**
   * Optional, a cheaper form of `transaction` for per-key order: opens the transaction with `first`
   * (statements with their values inlined, one simple query) in BEGIN's round trip, checks their
   * results' commands against `expect` and gives `fn` those results. Errors as `transaction`.
   * Where it is absent the consumer sends them as statements of `transaction`.
   */
  beginWith?<T>(
    first: string,
    expect: readonly string[],
    fn: (
      tx: Tx,
      results: readonly { command: string; rowCount: number | null; rows: unknown[] }[],
    ) => Promise<T>,
  ): Promise<T>
  /**
   * Optional, lets the consumer batch deliveries of one queue: opens the transaction with one
   * multi-row inbox INSERT of `entries` (no pair twice) and runs `fn` with the message ids that were
   * new (lower-case UUID text), then commits. Errors as `transaction` (inbox rows rolled back too).
   * Absent (`prismaDatabase`): every delivery has a transaction of its own.
   */
  inboxBatchTransaction?<T>(
    entries: readonly InboxEntry[],
    fn: (tx: Tx, fresh: ReadonlySet<string>) => Promise<T>,
  ): Promise<T>
}

/** The pair the inbox records: this handler took this message (inbox_message's primary key). */
export interface InboxEntry {
  messageId: string
  handler: string
}

/** What an inbox transaction did: ran the handler and committed (`fresh`), or found a duplicate. */
export type InboxOutcome<T> = { fresh: true; value: T } | { fresh: false }

/**
 * One reaction of a service to one message type. The queue is `<service>.<name>`; its
 * dead-letter queue `<service>.<name>.dlq`.
 */
export interface HandlerDefinition<Tx extends TransactionClient = TransactionClient, P = unknown> {
  /** Unique within the service, kebab-case, e.g. `reserve-stock-when-payment-processed`. */
  name: string
  /**
   * The message type handled. Another type is dead-lettered, except an older version with an
   * upcaster and a newer version (`<name>.v<N>`), held for a consumer that handles it (README).
   */
  message: MessageContract<P>
  /**
   * Older versions this handler takes too, each turned into `message`'s payload. Each `from` has
   * `message`'s routing key, another type, and no other upcaster from it (checked at start).
   */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  upcasts?: readonly Upcaster<P, any>[]
  /**
   * Runs inside the inbox transaction: its writes and its `enqueue` calls commit together with
   * the inbox row, or not at all. Throwing rolls everything back and the delivery is retried.
   */
  handle(message: ConsumedMessage<P>, tx: Tx): Promise<void>
  /**
   * `'per-key'`: the sequenced messages of one key from one producer are handled in the order the
   * producer committed them, one per transaction, across instances, retries and crashes; one that
   * comes early is held (table `ordering_waiting`) until its predecessor is handled, and a
   * dead-lettered one blocks its key until it is requeued or skipped (README, "Per-key order").
   * A message without a sequence is handled at once. Default: no order, batching allowed.
   */
  ordering?: 'per-key' | undefined
}

/** Turns the payload of an older version of a message into the one a handler takes. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export interface Upcaster<P = unknown, O = any> {
  /** The older version's contract: its type (e.g. `order.created.v1`) and the schema its payload is validated by first. */
  readonly from: MessageContract<O>
  /** Pure: the validated older payload -> the handler's payload (validated again by the handler's schema). */
  upcast(payload: O): P
}

/** Minimal structured logger (pino-compatible). */
export interface Logger {
  debug(obj: object, msg?: string): void
  info(obj: object, msg?: string): void
  warn(obj: object, msg?: string): void
  error(obj: object, msg?: string): void
}

/** Signals messaging emits; tests await them instead of sleeping. */
export interface SignalMap {
  /** A row confirmed by the broker and marked published. */
  published: {
    id: string
    type: string
    routingKey: string
    /** Outbox lag, ms: the row's age at the claim (database clock) plus claim to confirm (this process's). */
    lagMs?: number
    /** From the batch's first publish to its last confirm, ms (confirms are awaited per batch). */
    confirmMs?: number
  }
  /** A row whose publish failed this attempt (nack, return, timeout, channel error). */
  publishFailed: { id: string; type: string; attempts: number; error: string }
  /** A row parked (`failed_at` set): its attempts used up, or the broker refused the message itself. */
  parked: { id: string; type: string; attempts: number; error: string }
  /** A delivery whose handler committed. */
  handled: {
    id: string
    type: string
    handler: string
    correlationId: string
    /** The inbox transaction that committed, from BEGIN to COMMIT, ms (absent from batch recorders). */
    durationMs?: number
  }
  /** A delivery the inbox had already seen for this handler. */
  duplicate: { id: string; type: string; handler: string }
  /** A handler error that will be retried; `transient`: without spending the attempt (`attempt` runs again). */
  retrying: { id: string; type: string; handler: string; attempt: number; error: string; transient?: boolean }
  /** A delivery of a newer version than the handler's, held (the `times`th time) to be offered again. */
  held: { id: string; type: string; handler: string; times: number }
  /** A delivery moved to the handler's dead-letter queue. */
  deadLettered: { id: string | undefined; type: string | undefined; handler: string; reason: string }
}

export type SignalName = keyof SignalMap
