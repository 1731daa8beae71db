// A clock that steps by any amount, either way, through the memory store and the Redis store:
// the step costs a key at most its reset span, and leaves nothing more than there was.
import {
  fixedWindow,
  gcra,
  leakyBucket,
  memoryStore,
  slidingLog,
  slidingWindow,
  tokenBucket,
} from '@tollgate/core'
import type { Algorithm, Charge, Store } from '@tollgate/core/store'
import { redisStore } from '@tollgate/redis'
import { resetSpanMs } from '@tollgate/test-utils'
import fc from 'fast-check'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { REDIS_URL, redisAvailable, removeTestKeys, uniquePrefix } from './support/redis-env.js'
import { ioredisTarget, type Target } from './support/targets.js'

const YEAR_MS = 365 * 86_400_000
const START = 1_800_000_000_000

const algorithmArb: fc.Arbitrary<Algorithm> = fc.oneof(
  fc
    .record({
      rate: fc.oneof(fc.integer({ min: 1, max: 50 }), fc.integer({ min: 2048, max: 20_000 })),
      periodMs: fc.constantFrom(7, 1000, 60_000),
      burst: fc.integer({ min: 1, max: 20 }),
    })
    .chain((p) => fc.constantFrom(tokenBucket(p), gcra(p), leakyBucket(p))),
  fc
    .record({
      limit: fc.integer({ min: 1, max: 40 }),
      windowMs: fc.constantFrom(100, 1000, 60_000, 86_400_000),
    })
    .chain((p) => fc.constantFrom(fixedWindow(p), slidingLog(p), slidingWindow(p))),
)

const caseArb = algorithmArb.chain((algorithm) => {
  const span = resetSpanMs(algorithm)
  return fc.record({
    algorithm: fc.constant(algorithm),
    warmUp: fc.array(
      fc.record({
        gap: fc.integer({ min: 0, max: 2 * span }),
        cost: fc.integer({ min: 0, max: algorithm.limit }),
      }),
      { maxLength: 12 },
    ),
    step: fc
      .oneof(
        fc.integer({ min: 1, max: 3 * span + 2 }),
        fc.integer({ min: 1, max: 10 * YEAR_MS }),
        fc.constant(3 * 3_600_000),
      )
      .chain((size) => fc.constantFrom(size, -size)),
    cost: fc.integer({ min: 1, max: algorithm.limit }),
  })
})

type Case = typeof caseArb extends fc.Arbitrary<infer T> ? T : never

/** Drains a key, steps the clock, and checks both bounds on `store`. */
async function expectBoundedStep(store: Store, { algorithm, warmUp, step, cost }: Case) {
  const span = resetSpanMs(algorithm)
  const charge = (n: number): Charge => ({ rule: 'r', algorithm, key: 'k', cost: n, shadow: false })
  let now = START
  for (const { gap, cost: spent } of warmUp) {
    now += gap
    await store.consume([charge(spent)], now)
  }
  const left = (await store.consume([charge(0)], now)).decisions[0]!.remaining
  const at = Math.max(0, now + step)
  // Nothing more than there was: a step back hands out nothing.
  const looked = (await store.consume([charge(0)], at)).decisions[0]!
  if (step < 0) expect(looked.remaining).toBeLessThanOrEqual(left)
  const first = (await store.consume([charge(cost)], at)).decisions[0]!
  expect(first.resetAfterMs).toBeLessThanOrEqual(2 * span + 1)
  if (!first.allowed) expect(first.retryAfterMs).toBeLessThanOrEqual(2 * span + 1)
  // Whole again within two reset spans of the step: at most one on top of the rule's own.
  const whole = (await store.consume([charge(algorithm.limit)], at + 2 * span + 1)).decisions[0]!
  expect(whole.allowed).toBe(true)
}

/**
 * The reproduction of issue 50, item 3: a drained 1-second fixed window, the clock 3 hours back.
 * The count used to move into the window after the stepped clock's, a wait of 2 seconds; now
 * into a window starting at that time: one window, the rule's reset span.
 */
async function expectDrainedWindowWaitsOneWindow(store: Store) {
  const algorithm = fixedWindow({ limit: 5, windowMs: 1000 })
  const charge = (cost: number): Charge => ({ rule: 'r', algorithm, key: 'k', cost, shadow: false })
  expect((await store.consume([charge(5)], START)).decisions[0]!.allowed).toBe(true)
  const back = START - 3 * 3_600_000
  const denied = (await store.consume([charge(1)], back)).decisions[0]!
  expect(denied).toMatchObject({ allowed: false, retryAfterMs: 1000 })
  expect((await store.consume([charge(1)], back + 999)).decisions[0]!.allowed).toBe(false)
  expect((await store.consume([charge(5)], back + 1000)).decisions[0]!.allowed).toBe(true)
}

describe('a clock step of any size, in the memory store', () => {
  it('leaves a drained fixed window waiting one window after a 3-hour step back', async () => {
    await expectDrainedWindowWaitsOneWindow(memoryStore())
  })
  it('costs a key at most one reset span and hands out nothing', async () => {
    await fc.assert(
      fc.asyncProperty(caseArb, (c) => expectBoundedStep(memoryStore(), c)),
      { numRuns: 500 },
    )
  }, 60_000)
})

describe.skipIf(!redisAvailable)('a clock step of any size, in the Redis store', () => {
  let target: Target
  beforeAll(async () => {
    target = await ioredisTarget(REDIS_URL)
  })
  afterAll(async () => {
    await target?.close()
    await removeTestKeys()
  })

  it('leaves a drained fixed window waiting one window after a 3-hour step back', async () => {
    await expectDrainedWindowWaitsOneWindow(
      redisStore({
        client: target.client,
        time: 'caller',
        prefix: uniquePrefix('steps'),
        expiryMarginMs: 600_000,
        timeoutMs: 5000,
      }),
    )
  })

  it('costs a key at most one reset span and hands out nothing', async () => {
    await fc.assert(
      fc.asyncProperty(caseArb, (c) =>
        expectBoundedStep(
          redisStore({
            client: target.client,
            time: 'caller',
            prefix: uniquePrefix('steps'),
            // Nothing may expire on the server's clock while a case runs on its own clock.
            expiryMarginMs: 600_000,
            timeoutMs: 5000,
          }),
          c,
        ),
      ),
      { numRuns: 150 },
    )
  }, 60_000)
})

/**
 * Window rules on a clock that steps again and again, by any amount either way, and now and
 * then onto the last ms of a window (`edge`: that many windows away), where a step back would
 * do most harm if it let the next ms open a fresh window.
 */
const windowTraceArb = fc
  .record({ limit: fc.integer({ min: 1, max: 6 }), windowMs: fc.constantFrom(10, 100, 1000) })
  .chain((p) =>
    fc.record({
      algorithm: fc.constantFrom(
        fixedWindow(p),
        slidingWindow(p),
        slidingLog(p),
        slidingWindow({ ...p, buckets: 5 }),
      ),
      trace: fc.array(
        fc.record({
          jump: fc.oneof(
            fc.integer({ min: 0, max: 3 }),
            fc.integer({ min: -3 * p.windowMs, max: 3 * p.windowMs }),
            fc.integer({ min: -10 * YEAR_MS, max: 10 * YEAR_MS }),
          ),
          edge: fc.option(fc.integer({ min: -4, max: 0 }), { freq: 3 }),
          cost: fc.integer({ min: 0, max: 6 }),
        }),
        { minLength: 1, maxLength: 60 },
      ),
    }),
  )

type WindowTrace = typeof windowTraceArb extends fc.Arbitrary<infer T> ? T : never

/**
 * Runs a trace on `store` and checks, after every step, that the rule handed out no more than
 * while its clock only moved forward (a limit per window that forward movement touches, the
 * sliding log one window fewer), and that no wait exceeds two reset spans.
 */
async function expectBoundedSteps(store: Store, { algorithm, trace }: WindowTrace) {
  const span = resetSpanMs(algorithm)
  const { limit, windowMs } = algorithm.params as { limit: number; windowMs: number }
  let now = START
  let forward = 0
  let spent = 0
  for (const { jump, edge, cost } of trace) {
    const at = edge === null ? now + jump : now - (now % windowMs) + (edge + 1) * windowMs - 1
    const next = Math.max(0, at)
    forward += Math.max(0, next - now)
    now = next
    const charged = Math.min(cost, limit)
    const [decision] = (
      await store.consume([{ rule: 'r', algorithm, key: 'k', cost: charged, shadow: false }], now)
    ).decisions
    if (decision!.allowed) spent += charged
    const windows =
      algorithm.name === 'sliding_log'
        ? Math.floor(forward / windowMs) + 1
        : Math.ceil(forward / windowMs) + 1
    expect(spent).toBeLessThanOrEqual(limit * windows)
    expect(decision!.resetAfterMs).toBeLessThanOrEqual(2 * span + 1)
    expect(decision!.retryAfterMs ?? 0).toBeLessThanOrEqual(2 * span + 1)
  }
}

/**
 * A found case: a peek (cost 0) in the next window moved the state there with a count of 0; a
 * state that forgot it when dropped as "fresh" let the step back charge the old window again.
 * (A peek now writes nothing at all: the trace stays, for the step back after it.)
 */
const peekThenStepBack: WindowTrace = {
  algorithm: fixedWindow({ limit: 1, windowMs: 1000 }),
  trace: [
    { jump: 0, edge: -1, cost: 1 },
    { jump: 1, edge: null, cost: 0 },
    { jump: 0, edge: -1, cost: 1 },
    { jump: 1, edge: null, cost: 0 },
    { jump: 0, edge: null, cost: 1 },
  ],
}

/**
 * Two gateways on one store whose clocks disagree by up to the rule's reset span: a key charged
 * on the clock ahead, then a charge on the clock behind, then a look on the clock ahead again.
 */
const twoClocksArb = algorithmArb.chain((algorithm) =>
  fc.record({
    algorithm: fc.constant(algorithm),
    warmUp: fc.array(
      fc.record({
        gap: fc.integer({ min: 0, max: resetSpanMs(algorithm) }),
        cost: fc.integer({ min: 0, max: algorithm.limit }),
      }),
      { maxLength: 8 },
    ),
    behind: fc.integer({ min: 1, max: resetSpanMs(algorithm) }),
    cost: fc.integer({ min: 1, max: algorithm.limit }),
  }),
)

type TwoClocks = typeof twoClocksArb extends fc.Arbitrary<infer T> ? T : never

/**
 * The clock behind makes no room: after its charge, the clock ahead finds no more left than it
 * found before it (each case on a key of its own in `store`).
 */
async function expectNoRoomFromBehind(
  store: Store,
  { algorithm, warmUp, behind, cost }: TwoClocks,
) {
  const key = `k${Math.random().toString(36).slice(2)}`
  const charge = (n: number): Charge => ({ rule: 'r', algorithm, key, cost: n, shadow: false })
  let now = START
  for (const { gap, cost: spent } of warmUp) {
    now += gap
    await store.consume([charge(spent)], now)
  }
  // The clock ahead charges last, at the first ms a charge of 1 passes.
  const probe = (await store.consume([charge(1)], now)).decisions[0]!
  if (!probe.allowed) {
    now += probe.retryAfterMs!
    expect((await store.consume([charge(1)], now)).decisions[0]!.allowed).toBe(true)
  }
  const left = (await store.consume([charge(0)], now + 1)).decisions[0]!.remaining
  await store.consume([charge(cost)], now - behind)
  const after = (await store.consume([charge(0)], now + 1)).decisions[0]!.remaining
  expect(after).toBeLessThanOrEqual(left)
}

describe('clocks up to a reset span apart, sharing a store', () => {
  // The reproduction (issue 50, item 2): 20 per second, clocks 1,001 ms apart gave 40 in 1 ms.
  it.each([1000, 1001, 1999])(
    'admit 20 per second on a sliding window counter %i ms apart (memory store)',
    async (behind) => {
      const store = memoryStore()
      const algorithm = slidingWindow({ limit: 20, windowMs: 1000 })
      const charge = (cost: number): Charge => ({
        rule: 'r',
        algorithm,
        key: 'k',
        cost,
        shadow: false,
      })
      expect((await store.consume([charge(20)], START)).decisions[0]!.allowed).toBe(true)
      expect((await store.consume([charge(1)], START - behind)).decisions[0]!.allowed).toBe(false)
      expect((await store.consume([charge(1)], START + 1)).decisions[0]!.allowed).toBe(false)
    },
  )

  it('make no room for each other, in the memory store', async () => {
    const store = memoryStore()
    await fc.assert(
      fc.asyncProperty(twoClocksArb, (c) => expectNoRoomFromBehind(store, c)),
      { numRuns: 500 },
    )
  }, 60_000)
})

describe.skipIf(!redisAvailable)('clocks up to a reset span apart, sharing a Redis store', () => {
  let target: Target
  beforeAll(async () => {
    target = await ioredisTarget(REDIS_URL)
  })
  afterAll(async () => {
    await target?.close()
    await removeTestKeys()
  })

  it('make no room for each other', async () => {
    const store = redisStore({
      client: target.client,
      time: 'caller',
      prefix: uniquePrefix('two-clocks'),
      expiryMarginMs: 600_000,
      timeoutMs: 5000,
    })
    await fc.assert(
      fc.asyncProperty(twoClocksArb, (c) => expectNoRoomFromBehind(store, c)),
      { numRuns: 200 },
    )
  }, 60_000)
})

describe('a window rule on a clock that steps again and again, in the memory store', () => {
  it('remembers a window a peek moved to, when the clock steps back out of it', async () => {
    const store = memoryStore()
    await expectBoundedSteps(store, peekThenStepBack)
  })

  it('hands out no more than on a clock that only moved forward, and costs at most one reset span', async () => {
    await fc.assert(
      fc.asyncProperty(windowTraceArb, (c) => expectBoundedSteps(memoryStore(), c)),
      { numRuns: 400 },
    )
  }, 60_000)
})

describe.skipIf(!redisAvailable)(
  'a window rule on a clock that steps again and again, in the Redis store',
  () => {
    let target: Target
    beforeAll(async () => {
      target = await ioredisTarget(REDIS_URL)
    })
    afterAll(async () => {
      await target?.close()
      await removeTestKeys()
    })

    const store = () =>
      redisStore({
        client: target.client,
        time: 'caller',
        prefix: uniquePrefix('window-steps'),
        expiryMarginMs: 600_000,
        timeoutMs: 5000,
      })

    it('remembers a window a peek moved to, when the clock steps back out of it', async () => {
      await expectBoundedSteps(store(), peekThenStepBack)
    })

    it('hands out no more than on a clock that only moved forward, and costs at most one reset span', async () => {
      await fc.assert(
        fc.asyncProperty(windowTraceArb, (c) => expectBoundedSteps(store(), c)),
        { numRuns: 800 },
      )
    }, 60_000)
  },
)
