/**
 * Requests waiting for a concurrency slot, over real HTTP on every adapter: with a line, the
 * request over the limit waits and runs when a slot frees; a full line refuses at once; a wait
 * that is over is refused with Retry-After, and a client that goes away leaves the line. The
 * limiter runs on injected time (its waits are the scheduler's); handlers block on gates. What
 * the test awaits is checked again each time the store decides or gives back, or a wait is
 * called off: no polling interval.
 */
import { createLimiter, memoryStore, type RuleConfig } from '@tollgate/core'
import { changes, manualTime } from '@tollgate/test-utils'
import { afterEach, describe, expect, it } from 'vitest'
import { APPS, type Served } from './concurrency/apps.js'
import { open } from './concurrency/client.js'
import { Gates } from './concurrency/gates.js'

const LIMIT = 2
const T0 = 1_700_000_000_000

describe.each(APPS)('$name: waiting for a concurrency slot', (app) => {
  let served: Served | undefined
  afterEach(async () => {
    await served?.close()
    served = undefined
  })

  async function start(queue: number) {
    const time = manualTime(T0)
    const watch = changes()
    const inner = memoryStore()
    let decided = 0
    const rule = {
      id: 'reports',
      match: {},
      algorithm: 'concurrency',
      limit: LIMIT,
      queue,
      maxWait: '2s',
    } as RuleConfig
    const limiter = createLimiter({
      rules: [rule],
      clock: time.clock,
      timers: {
        setTimeout: (callback, ms) => time.timers.setTimeout(callback, ms),
        clearTimeout(handle) {
          time.timers.clearTimeout(handle)
          watch.changed()
        },
      },
      logger: false,
      store: {
        consume(charges, now) {
          decided++
          // held()'s own check costs nothing: telling of it would only run the check again.
          if (charges.some((charge) => charge.cost > 0)) watch.changed()
          return inner.consume(charges, now)
        },
        refund(charges, chargedAt, now) {
          watch.changed()
          return inner.refund(charges, chargedAt, now)
        },
      },
    })
    const gates = new Gates()
    served = await app.start(limiter, gates)
    const held = async () => LIMIT - (await limiter.check('*', 'reports', { cost: 0 })).remaining
    /** Resolves once the store has decided `n` requests (waiters are decided again). */
    const decidedAll = (n: number) => watch.until(() => expect(decided).toBeGreaterThanOrEqual(n))
    /** Resolves once every slot is given back. */
    const allFree = () => watch.until(async () => expect(await held()).toBe(0))
    return { time, watch, gates, held, decidedAll, allFree, port: served.port }
  }

  it(`with a line: the request over ${LIMIT} waits, and runs when a slot frees`, async () => {
    const { gates, held, decidedAll, allFree, port } = await start(1)
    const first = open(port, '/block/a')
    const second = open(port, '/block/b')
    await Promise.all([gates.started('a'), gates.started('b')])
    let answered = false
    const extra = open(port, '/block/c')
    void extra.answer.then(() => {
      answered = true
    })
    await decidedAll(3)
    expect(answered).toBe(false)
    expect(await held()).toBe(LIMIT)
    gates.open('a')
    expect((await first.answer).status).toBe(200)
    // The freed slot went to the waiter: its handler runs.
    await gates.started('c')
    expect(await held()).toBe(LIMIT)
    gates.open('c')
    gates.open('b')
    const answers = await Promise.all([extra.answer, second.answer])
    expect(answers.map((answer) => answer.status)).toEqual([200, 200])
    await allFree()
  })

  it('with the line full: refused at once with 429 and Retry-After', async () => {
    const { gates, decidedAll, port } = await start(1)
    const running = [open(port, '/block/a'), open(port, '/block/b')]
    await Promise.all([gates.started('a'), gates.started('b')])
    const waiting = open(port, '/block/c')
    await decidedAll(3)
    const refused = await open(port, '/block/d').answer
    expect(refused.status).toBe(429)
    expect(refused.headers['retry-after']).toBe('1')
    expect(refused.headers['ratelimit-policy']).toBe('"reports";q=2;qu="concurrent-requests"')
    for (const gate of ['a', 'b', 'c']) gates.open(gate)
    const answers = await Promise.all([...running, waiting].map((exchange) => exchange.answer))
    expect(answers.map((answer) => answer.status)).toEqual([200, 200, 200])
  })

  it('a wait that is over is refused with Retry-After, and its handler never runs', async () => {
    const { time, gates, decidedAll, allFree, port } = await start(1)
    const running = [open(port, '/block/a'), open(port, '/block/b')]
    await Promise.all([gates.started('a'), gates.started('b')])
    let ran = false
    void gates.started('late').then(() => {
      ran = true
    })
    const late = open(port, '/block/late')
    await decidedAll(3)
    await time.advance(1999)
    await time.advance(1)
    const answer = await late.answer
    expect(answer.status).toBe(429)
    expect(answer.headers['retry-after']).toBe('1')
    expect(time.pending()).toBe(0)
    gates.open('a')
    gates.open('b')
    await Promise.all(running.map((exchange) => exchange.answer))
    await allFree()
    expect(ran).toBe(false)
  })

  it('a client that goes away leaves the line: the next one takes its place and its slot', async () => {
    const { time, watch, gates, decidedAll, allFree, port } = await start(1)
    const running = [open(port, '/block/a'), open(port, '/block/b')]
    await Promise.all([gates.started('a'), gates.started('b')])
    let ran = false
    void gates.started('gone').then(() => {
      ran = true
    })
    const leaving = open(port, '/block/gone')
    await decidedAll(3)
    expect(time.pending()).toBe(1)
    leaving.request.destroy()
    // Out of the line once the server hears of the close: its wait is no longer timed.
    await watch.until(() => expect(time.pending()).toBe(0))
    // A line of one: the next request waits rather than being refused.
    const next = open(port, '/block/next')
    await decidedAll(4)
    gates.open('a')
    await gates.started('next')
    gates.open('next')
    gates.open('b')
    const answers = await Promise.all([next, ...running].map((exchange) => exchange.answer))
    expect(answers.map((answer) => answer.status)).toEqual([200, 200, 200])
    await allFree()
    expect(ran).toBe(false)
  })
})
