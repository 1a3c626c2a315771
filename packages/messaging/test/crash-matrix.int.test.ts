// Cost: about 55 s alone on 2 cores, 65-75 s beside another run with the cores busy (one database, one
// exchange and queue, eleven child processes one after another; seven cases wait out a hold or the
// relay's guard, 6 to 8 s each, since the protocol's timing is what they prove). The README's
// "The outbox row's life" is the table these cases cover.
import { useFixture } from '@saga/testkit'
import { afterEach, describe, expect, it } from 'vitest'
import { crashMatrix } from './crash/matrix-fixture.js'

// The publish protocol at every crash point: a child process (test/crash/producer.ts) enqueues,
// commits and publishes through the package, and is killed (SIGKILL) or stopped (SIGSTOP) at one
// point of publish on commit or of the relay's sweep. Then the relay of another instance (this
// process's) sweeps what it left, and this process's inbox consumer counts the deliveries: every
// committed message reaches it with the id it was given at enqueue and is handled once; a copy
// published twice arrives as a duplicate the inbox absorbs.

const m = useFixture(crashMatrix)
afterEach(() => m.reset())

describe('publish on commit, before the COMMIT', () => {
  it('when the process dies after the INSERT, before the COMMIT, then neither the row nor the business write exists and nothing is published', async () => {
    const child = await m.start({ mode: 'commit', crashAt: 'after-insert' })
    child.send('commit-own')
    const [, , id = ''] = await child.line(/^at (after-insert) (\S+)$/)
    await child.kill()
    await m.expectNothingCommitted(id)
  })

  it('when the process dies before the COMMIT that carries the deferred INSERT, then neither the row nor the business write exists and nothing is published', async () => {
    const child = await m.start({ mode: 'commit', crashAt: 'before-commit' })
    child.send('commit')
    const [, , id = ''] = await child.line(/^at (before-commit) (\S+)$/)
    await child.kill()
    await m.expectNothingCommitted(id)
  })
})

describe('publish on commit, after the COMMIT', () => {
  it('when the process dies after the COMMIT, before the publish, then the row stays held until another relay sweeps it, delivered once with its id', async () => {
    const child = await m.start({ mode: 'commit', crashAt: 'after-commit' })
    child.send('commit')
    const [, , id = ''] = await child.line(/^at (after-commit) (\S+)$/)
    await child.kill()
    expect(await m.row(id)).toMatchObject({ published_at: null, held: true, due: false })
    const relay = await m.rescuer()
    await relay.signals.waitFor('published', (signal) => signal.id === id, 30_000)
    await m.handled(id)
    await m.expectHandledOnce(id, 1)
  })

  it('when the process dies after the publish reached the broker, before the confirm came back, then the sweep publishes it again and the inbox absorbs the copy', async () => {
    const proxy = await m.useProxy()
    // Three seconds until the child's own confirm timeout: the kill comes long before it.
    const child = await m.start({ mode: 'commit', publishTimeoutMs: 3_000 })
    proxy.silence('fromTarget')
    child.send('commit')
    const [, id = ''] = await child.line(/^committed (\S+)$/)
    await m.handled(id)
    // The broker has it and the child does not know: no confirm, no mark, no give-back.
    expect(await m.row(id)).toMatchObject({ published_at: null, held: true, due: false })
    await child.kill()
    await m.rescuer()
    await m.duplicated(id)
    await m.expectHandledOnce(id, 2)
  })

  it('when the process dies after the confirm, before the mark, then the sweep publishes it again once the hold has passed and the inbox absorbs the copy', async () => {
    const child = await m.start({ mode: 'commit', crashAt: 'after-confirm' })
    child.send('commit')
    const [, , id = ''] = await child.line(/^at (after-confirm) (\S+)$/)
    await m.handled(id)
    await child.kill()
    expect(await m.row(id)).toMatchObject({ published_at: null, held: true })
    await m.rescuer()
    await m.duplicated(id)
    await m.expectHandledOnce(id, 2)
  })

  it('when the process is stopped after the COMMIT past the hold, then another relay publishes and marks the row, and the stopped process, continued, publishes a copy the inbox absorbs and marks nothing', async () => {
    const child = await m.start({ mode: 'commit', crashAt: 'after-commit', stopWith: 'sigstop' })
    child.send('commit')
    const [, , id = ''] = await child.line(/^at (after-commit) (\S+)$/)
    const relay = await m.rescuer()
    await relay.signals.waitFor('published', (signal) => signal.id === id, 30_000)
    await m.handled(id)
    const marked = (await m.row(id))?.published_at
    child.signal('SIGCONT')
    await m.duplicated(id)
    // Its round ended: its publish timeout passed while it was stopped, so it gives the row back
    // (the give-back takes only unpublished rows), unless the confirm came first and it marks.
    await child.line(new RegExp(`^settled (mark|give-back) ${id}$`))
    await m.expectHandledOnce(id, 2)
    expect((await m.row(id))?.published_at).toEqual(marked)
  })

  it('when the process is stopped after the confirm, before the mark, past the hold, then another relay publishes the row again, and the late mark, continued, changes nothing', async () => {
    const child = await m.start({ mode: 'commit', crashAt: 'after-confirm', stopWith: 'sigstop' })
    child.send('commit')
    const [, , id = ''] = await child.line(/^at (after-confirm) (\S+)$/)
    await m.handled(id)
    const relay = await m.rescuer()
    await relay.signals.waitFor('published', (signal) => signal.id === id, 30_000)
    await m.duplicated(id)
    const marked = (await m.row(id))?.published_at
    child.signal('SIGCONT')
    // The mark takes only rows still held and unpublished: this one is neither any more.
    await child.line(new RegExp(`^settled mark ${id}$`))
    await m.expectHandledOnce(id, 2)
    expect((await m.row(id))?.published_at).toEqual(marked)
  })
})

describe("the relay's sweep, holding the claimed rows' locks", () => {
  it('when the relay dies right after its claim, then the server frees the lock and another relay publishes the row once', async () => {
    const child = await m.start({ mode: 'sweep', crashAt: 'sweep-after-claim' })
    const id = await m.commitDue(101)
    await child.line(new RegExp(`^at sweep-after-claim ${id}$`))
    expect(await m.locked(id)).toBe(true)
    await child.kill()
    const relay = await m.rescuer()
    await relay.signals.waitFor('published', (signal) => signal.id === id, 30_000)
    await m.handled(id)
    await m.expectHandledOnce(id, 1)
  })

  it('when the relay dies after the publish reached the broker, before the confirm came back, then another relay publishes it again and the inbox absorbs the copy', async () => {
    const proxy = await m.useProxy()
    const child = await m.start({ mode: 'sweep', publishTimeoutMs: 3_000 })
    proxy.silence('fromTarget')
    const id = await m.commitDue(102)
    await m.handled(id)
    expect(await m.locked(id)).toBe(true)
    await child.kill()
    await m.rescuer()
    await m.duplicated(id)
    await m.expectHandledOnce(id, 2)
  })

  it('when the relay dies after the confirm, before the mark, then another relay publishes it again and the inbox absorbs the copy', async () => {
    const child = await m.start({ mode: 'sweep', crashAt: 'sweep-after-confirm' })
    const id = await m.commitDue(103)
    await child.line(new RegExp(`^at sweep-after-confirm ${id}$`))
    await m.handled(id)
    expect(await m.locked(id)).toBe(true)
    await child.kill()
    await m.rescuer()
    await m.duplicated(id)
    await m.expectHandledOnce(id, 2)
  })

  it('when the relay is stopped while it holds the lock, then the server cuts its session at the guard, another relay publishes the row, and the stopped relay, continued, publishes a copy the inbox absorbs', async () => {
    const child = await m.start({ mode: 'sweep', crashAt: 'sweep-after-claim', stopWith: 'sigstop' })
    const id = await m.commitDue(104)
    await child.line(new RegExp(`^at sweep-after-claim ${id}$`))
    expect(await m.locked(id)).toBe(true)
    const relay = await m.rescuer()
    // idle_in_transaction_session_timeout (publish timeout + 5 s) ends the stopped relay's transaction.
    await relay.signals.waitFor('published', (signal) => signal.id === id, 30_000)
    await m.handled(id)
    const marked = (await m.row(id))?.published_at
    child.signal('SIGCONT')
    await m.duplicated(id)
    // Its mark ran on a session the server had ended: it failed, and changed nothing.
    await child.line(new RegExp(`^settled mark ${id}$`))
    await m.expectHandledOnce(id, 2)
    expect((await m.row(id))?.published_at).toEqual(marked)
  })
})
