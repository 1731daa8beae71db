/**
 * Concurrency rules over real HTTP on every adapter: requests hold a slot from decision until
 * their response is over, however it ends (answered, thrown, streamed, the client gone, Hono's
 * `c.res` replaced), and give it back exactly once. Handlers block until the test opens their
 * gate; nothing waits for time.
 */
import { createLimiter, type Limiter, loadShedder } from '@tollgate/core'
import { afterEach, describe, expect, it } from 'vitest'
import { APPS, type Served } from './concurrency/apps.js'
import { firstChunk, open, watchReleases } from './concurrency/client.js'
import { Gates } from './concurrency/gates.js'

const LIMIT = 2

/** Slots in use, read from the store without taking one (cost 0 only inspects). */
async function held(limiter: Limiter): Promise<number> {
  const decision = await limiter.check('*', 'reports', { cost: 0 })
  return LIMIT - decision.remaining
}

describe.each(APPS)('$name: a concurrency limit', (app) => {
  let served: Served | undefined
  afterEach(async () => {
    await served?.close()
    served = undefined
  })

  async function start() {
    const limiter = createLimiter({
      rules: [{ id: 'reports', match: {}, algorithm: 'concurrency', limit: LIMIT }],
      logger: false,
    })
    const watched = watchReleases(limiter)
    const gates = new Gates()
    served = await app.start(watched.limiter, gates)
    return { limiter, watched, gates, port: served.port }
  }

  it(`runs exactly ${LIMIT} of ${LIMIT + 1} concurrent requests and refuses the extra one with 429`, async () => {
    const { limiter, watched, gates, port } = await start()
    const first = open(port, '/block/a')
    const second = open(port, '/block/b')
    await Promise.all([gates.started('a'), gates.started('b')])
    const extra = await open(port, '/block/c').answer
    expect(extra.status).toBe(429)
    expect(extra.headers['retry-after']).toBe('1')
    expect(extra.headers['ratelimit-policy']).toBe('"reports";q=2;qu="concurrent-requests"')
    expect(extra.headers['ratelimit']).toBe('"reports";r=0;t=1')
    expect(await held(limiter)).toBe(LIMIT)
    gates.open('a')
    gates.open('b')
    const answers = await Promise.all([first.answer, second.answer])
    expect(answers.map((answer) => answer.status)).toEqual([200, 200])
    await watched.released(2)
    expect(await held(limiter)).toBe(0)
    // With the slots back, the next request runs.
    gates.open('d')
    const after = await open(port, '/block/d').answer
    expect(after.status).toBe(200)
    expect(after.headers['ratelimit-policy']).toBe('"reports";q=2;qu="concurrent-requests"')
    await watched.released(3)
    expect(await held(limiter)).toBe(0)
    expect(watched.mostPerVerdict).toBe(1)
  })

  it('gives the slot back when the handler throws', async () => {
    const { limiter, watched, gates, port } = await start()
    const holder = open(port, '/block/holder')
    await gates.started('holder')
    gates.open('t')
    expect((await open(port, '/throw/t').answer).status).toBe(500)
    await watched.released(1)
    // The holder's slot is still held: a second release would have freed it too.
    expect(await held(limiter)).toBe(1)
    gates.open('holder')
    await holder.answer
    await watched.released(2)
    expect(await held(limiter)).toBe(0)
    expect(watched.mostPerVerdict).toBe(1)
  })

  it('gives the slot back once when the client disconnects before the answer', async () => {
    const { limiter, watched, gates, port } = await start()
    const holder = open(port, '/block/holder')
    await gates.started('holder')
    const leaving = open(port, '/block/gone')
    await gates.started('gone')
    expect(await held(limiter)).toBe(2)
    leaving.request.destroy()
    await watched.released(1)
    expect(await held(limiter)).toBe(1)
    // The handler finishing later gives nothing back twice.
    gates.open('gone')
    gates.open('holder')
    expect((await holder.answer).status).toBe(200)
    await watched.released(2)
    expect(await held(limiter)).toBe(0)
    expect(watched.mostPerVerdict).toBe(1)
  })

  it('holds the slot of a streamed response until its last byte', async () => {
    const { limiter, watched, gates, port } = await start()
    const streaming = open(port, '/stream/s')
    const head = await streaming.head
    expect(await firstChunk(head)).toBe('first;')
    expect(await held(limiter)).toBe(1)
    expect(watched.count).toBe(0)
    gates.open('s')
    const body = await new Promise<string>((resolve) => {
      let rest = ''
      head.on('data', (chunk: Buffer) => {
        rest += String(chunk)
      })
      head.once('end', () => resolve(rest))
    })
    expect(body).toBe('last')
    await watched.released(1)
    expect(await held(limiter)).toBe(0)
  })

  it('gives the slot back when a slow client goes away in the middle of a stream', async () => {
    const { limiter, watched, gates, port } = await start()
    const holder = open(port, '/block/holder')
    await gates.started('holder')
    const streaming = open(port, '/stream/m')
    expect(await firstChunk(await streaming.head)).toBe('first;')
    expect(await held(limiter)).toBe(2)
    streaming.request.destroy()
    await watched.released(1)
    expect(await held(limiter)).toBe(1)
    gates.open('m')
    gates.open('holder')
    await holder.answer
    await watched.released(2)
    expect(await held(limiter)).toBe(0)
    expect(watched.mostPerVerdict).toBe(1)
  })

  it('gives the slot back when a middleware replaces the response', async () => {
    const { limiter, watched, gates, port } = await start()
    gates.open('r')
    const answer = await open(port, '/replace/r').answer
    expect(answer.status).toBe(app.name.startsWith('hono') ? 201 : 200)
    await watched.released(1)
    expect(await held(limiter)).toBe(0)
  })
})

describe.each(APPS)('$name: load shedding', (app) => {
  let served: Served | undefined
  afterEach(async () => {
    await served?.close()
    served = undefined
  })

  it('answers 503 with Retry-After and the problem type while the injected delay is high, critical routes still served', async () => {
    const time = { now: 1_000_000, delay: 0 }
    const limiter = createLimiter({
      rules: [
        {
          id: 'per-ip',
          match: { identity: 'ip' },
          algorithm: 'token_bucket',
          rate: 100,
          burst: 100,
        },
      ],
      logger: false,
    })
    served = await app.start(limiter, new Gates(), {
      clock: { now: () => time.now },
      shed: loadShedder({
        maxEventLoopDelayMs: 100,
        eventLoopDelay: () => time.delay,
        sampleEveryMs: 10,
        critical: ['/pay'],
      }),
    })
    expect((await open(served.port, '/report').answer).status).toBe(200)
    time.delay = 400
    time.now += 10
    const shed = await open(served.port, '/report').answer
    expect(shed.status).toBe(503)
    expect(shed.headers['retry-after']).toBe('1')
    expect(shed.headers['content-type']).toMatch('application/problem+json')
    expect(JSON.parse(shed.body)).toMatchObject({
      type: 'https://iana.org/assignments/http-problem-types#temporary-reduced-capacity',
      code: 'load-shed',
    })
    expect((await open(served.port, '/pay').answer).status).toBe(200)
    // Back under the hysteresis bound at the next sample: served again.
    time.delay = 50
    time.now += 10
    expect((await open(served.port, '/report').answer).status).toBe(200)
  })
})
