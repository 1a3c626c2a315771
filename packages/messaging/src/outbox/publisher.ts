import type { ConfirmChannel, Message } from 'amqplib'
import type { Publishable } from './envelope.js'

/** Why one message of a batch was not published. */
export interface PublishFailure {
  id: string
  error: string
  /**
   * - `poison`: amqplib cannot encode it (e.g. headers over 64 KiB): backoff, parked after the attempts.
   * - `unroutable`: returned `312 NO_ROUTE` (a topology gap): the row's backoff, never parked.
   * - `transport`: the batch failed (confirm timeout, channel or connection closed): retried as soon
   *   as the link works, never parked.
   * - `rejected`: nacked, which RabbitMQ does for a queue's state, never a message's content: retried
   *   within 5 s on a new channel (3.10 kept nacking the channel that saw a `reject-publish`), never parked.
   * - `refused`: a 406 on `basic.publish` naming it (e.g. over `max_message_size`): parked at once.
   */
  kind: 'poison' | 'unroutable' | 'transport' | 'rejected' | 'refused'
}

/** Outcome of one batch: confirmed ids and failures; together they cover every message. */
export interface BatchOutcome {
  published: string[]
  failed: PublishFailure[]
  /** The channel can no longer be used (closed, a confirm timed out, or nacked): open a new one. */
  channelBroken: boolean
  /**
   * The broker refused one message of these (a 406 on `basic.publish`) without saying which: each is
   * to be published alone next, so that the refusal names it. Their failures are `transport`.
   */
  suspects: readonly string[]
}

/** basic.publish (class 60, method 40): the method a per-message refusal closes the channel on. */
const BASIC_PUBLISH = { classId: 60, methodId: 40 }
const PRECONDITION_FAILED = 406

/** A channel-closing error of the broker: its AMQP reply code and the method it closed on. */
type ChannelCloseError = Error & { code?: number; classId?: number; methodId?: number }

/** RabbitMQ's text for a body over `max_message_size` (rabbit_channel:check_msg_size/3). */
const TOO_LARGE = /message size (\d+) is larger than configured max size (\d+)/

/** No message refused: the usual batch's answer, shared. */
const NONE_REFUSED: { refused: ReadonlySet<string>; suspects: readonly string[] } = {
  refused: new Set(),
  suspects: [],
}

/** True when the broker closed the channel refusing a published message itself (406 on basic.publish). */
function refusesMessage(error: ChannelCloseError): boolean {
  return (
    error.code === PRECONDITION_FAILED &&
    error.classId === BASIC_PUBLISH.classId &&
    error.methodId === BASIC_PUBLISH.methodId
  )
}

/** basic.return fields: https://www.rabbitmq.com/amqp-0-9-1-reference#basic.return */
type ReturnFields = Message['fields'] & { replyCode?: number; replyText?: string }

/**
 * What the broker said about one batch on its channel: returns, confirms, nacks, a close. Settles
 * `done` once every message has an outcome or the channel closed.
 */
class BatchConfirms {
  readonly #returned = new Map<string, string>()
  readonly #outcome = new Map<string, PublishFailure | 'ok'>()
  #closeReason = ''
  // The broker's 406 on basic.publish, when it closed the channel for a message of this batch.
  #refusal: ChannelCloseError | undefined
  #nacked = false
  #settle: () => void = () => undefined
  readonly done = new Promise<void>((resolve) => (this.#settle = resolve))

  constructor(
    readonly exchange: string,
    readonly size: number,
    readonly alone: boolean,
  ) {}

  readonly onReturn = (message: Message): void => {
    const id = message.properties.messageId as string | undefined
    const fields = message.fields as ReturnFields
    if (id === undefined) return
    const reply = `${fields.replyCode ?? '?'} ${fields.replyText ?? 'unroutable'}`
    this.#returned.set(
      id,
      `returned by the broker as ${reply} (exchange ${this.exchange}, routing key ${fields.routingKey})`,
    )
  }

  readonly onClose = (): void => {
    this.#closeReason ||= 'channel closed before confirming'
    this.#settle()
  }

  readonly onError = (error: ChannelCloseError): void => {
    this.#closeReason = `channel closed: ${error.message}`
    if (refusesMessage(error)) this.#refusal = error
  }

  /** The publish timeout passed: whatever has no answer now is counted as timed out. */
  readonly timeout = (): void => this.#settle()

  /** The broker's confirm (or nack, or the channel's close) of message `id`. */
  confirmed(id: string, error: unknown): void {
    if (error) {
      // A channel that closes calls back every pending publish with an error: that is the
      // transport's failure, not this message's.
      const transport = this.#closeReason !== '' || /closed/i.test((error as Error).message ?? '')
      if (!transport) this.#nacked = true
      this.#record(id, {
        id,
        error: transport ? this.#closeReason || 'channel closed' : 'nacked by the broker',
        kind: transport ? 'transport' : 'rejected',
      })
      return
    }
    // The broker sends the return before the ack on the same channel.
    const why = this.#returned.get(id)
    this.#record(id, why ? { id, error: why, kind: 'unroutable' } : 'ok')
  }

  /** `publish` threw: a closed channel (IllegalOperationError) or a message amqplib cannot encode. */
  refused(id: string, error: Error): void {
    const closed = /closed/i.test(error.message)
    this.#record(id, { id, error: `publish failed: ${error.message}`, kind: closed ? 'transport' : 'poison' })
  }

  #record(id: string, result: PublishFailure | 'ok'): void {
    if (this.#outcome.has(id)) return
    this.#outcome.set(id, result)
    if (this.#outcome.size === this.size) this.#settle()
  }

  /**
   * The outcome of every message of `batch`; one without an answer timed out or was cut off, or
   * was refused by the broker (see `#refused`).
   */
  result(batch: readonly { id: string; message: Publishable }[], timeoutMs: number): BatchOutcome {
    const timedOut = this.#outcome.size < this.size && this.#closeReason === ''
    const { refused, suspects } = this.#refusal ? this.#refused(batch, this.#refusal) : NONE_REFUSED
    const published: string[] = []
    const failed: PublishFailure[] = []
    for (const { id } of batch) {
      const result = this.#outcome.get(id)
      if (result === 'ok') published.push(id)
      else if (refused.has(id))
        failed.push({ id, error: `refused by the broker: ${this.#refusal?.message}`, kind: 'refused' })
      else if (result) failed.push(result)
      else {
        const error = timedOut ? `broker confirm timed out after ${timeoutMs} ms` : this.#closeReason
        failed.push({ id, error, kind: 'transport' })
      }
    }
    return {
      published,
      failed,
      channelBroken: this.#closeReason !== '' || timedOut || this.#nacked,
      suspects,
    }
  }

  /**
   * Which unanswered messages the broker's 406 refused (it closes the channel at the first it
   * refuses): for a size refusal, every one over the limit it names; for another, the only one left
   * of a batch published `alone`; otherwise they are all suspects, to be published alone in turn.
   */
  #refused(
    batch: readonly { id: string; message: Publishable }[],
    refusal: ChannelCloseError,
  ): { refused: ReadonlySet<string>; suspects: readonly string[] } {
    // The channel's close fails every unconfirmed publish as `transport`: those are unanswered too.
    const unanswered = batch.filter(({ id }) => {
      const result = this.#outcome.get(id)
      return result === undefined || (result !== 'ok' && result.kind === 'transport')
    })
    const tooLarge = TOO_LARGE.exec(refusal.message)
    const overLimit = tooLarge
      ? unanswered.filter(({ message }) => message.content.length > Number(tooLarge[2]))
      : []
    const named = overLimit.length > 0 ? overLimit : this.alone && unanswered.length === 1 ? unanswered : []
    if (named.length > 0) return { refused: new Set(named.map(({ id }) => id)), suspects: [] }
    // A size refusal is explained by its size: a batch beside the refused one (pipelined on the
    // same channel) holds no suspect, only messages cut off by the close.
    if (tooLarge) return NONE_REFUSED
    return { refused: NONE_REFUSED.refused, suspects: unanswered.map(({ id }) => id) }
  }
}

/**
 * Publishes a batch on a confirm channel, `mandatory`, and awaits all its confirms at once, for at
 * most `timeoutMs` ms. A `basic.return` (before its ack) is `unroutable`; a timeout or a closed
 * channel leaves every unconfirmed message unpublished (at least once). A 406 refuses the message it
 * names, else the unconfirmed ones are `suspects`; `alone` (nothing else in flight on `channel`)
 * makes a lone unconfirmed message the refused one. Never rejects.
 */
export async function publishBatch(
  channel: ConfirmChannel,
  exchange: string,
  batch: { id: string; message: Publishable }[],
  timeoutMs: number,
  alone = false,
): Promise<BatchOutcome> {
  // An empty batch would wait out the timeout for confirms that never come.
  if (batch.length === 0) return { published: [], failed: [], channelBroken: false, suspects: [] }
  const confirms = new BatchConfirms(exchange, batch.length, alone)
  channel.on('return', confirms.onReturn)
  channel.on('close', confirms.onClose)
  channel.on('error', confirms.onError)
  const timer = setTimeout(confirms.timeout, timeoutMs)
  try {
    for (const { id, message } of batch) {
      try {
        // false from publish() only means a full socket buffer; the batch is bounded, the confirms awaited.
        channel.publish(exchange, message.routingKey, message.content, message.options, (error: unknown) =>
          confirms.confirmed(id, error),
        )
      } catch (error) {
        confirms.refused(id, error as Error)
      }
    }
    await confirms.done
  } finally {
    clearTimeout(timer)
    channel.off('return', confirms.onReturn)
    channel.off('close', confirms.onClose)
    channel.off('error', confirms.onError)
  }
  return confirms.result(batch, timeoutMs)
}
