import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import type { RuleConfig } from '../rules/types.js'
import { memoryStore } from '../store/memory-store.js'
import type { Outcome, Store } from '../store/types.js'
import { createLimiter } from './create-limiter.js'
import { failureRule, PAYMENT } from './test-stores.js'
import type { LimiterOptions, RuleDecision, StoreErrorContext, Verdict } from './types.js'

const rule = failureRule
const facts = PAYMENT

/** A store that answers only when told to: `answer()` settles every call made so far. */
function heldStore() {
  const inner = memoryStore()
  const held: Array<() => void> = []
  const store: Store = {
    consume: (charges, now) =>
      new Promise<Outcome>((resolve) => held.push(() => resolve(inner.consume(charges, now)))),
    refund: (charges, chargedAt, now) =>
      new Promise<void>((resolve) =>
        held.push(() => resolve(inner.refund(charges, chargedAt, now))),
      ),
  }
  const answer = () => {
    for (const settle of held.splice(0)) settle()
  }
  return { store, answer }
}

/** Settles what is pending: promise callbacks, with timers that are due run by `advance`. */
const flush = () => vi.advanceTimersByTimeAsync(0)

describe('storeTimeoutMs', () => {
  beforeEach(() => {
    vi.useFakeTimers()
  })
  afterEach(() => {
    vi.useRealTimers()
  })

  function setup(rules: RuleConfig[], options: Partial<LimiterOptions> = {}) {
    const { store, answer } = heldStore()
    const errors: Array<[unknown, StoreErrorContext]> = []
    const limiter = createLimiter({
      rules,
      store,
      onError: (error, context) => errors.push([error, context]),
      ...options,
    })
    return { limiter, answer, errors }
  }

  /** Tracks whether a promise has settled, and with what. */
  function watch<T>(promise: T | Promise<T>) {
    const state: { settled: boolean; value?: T } = { settled: false }
    void Promise.resolve(promise).then((value) => {
      state.settled = true
      state.value = value
    })
    return state
  }

  it('decides a request by each rule’s onStoreError once a hung store has had 1000 ms', async () => {
    const { limiter, errors } = setup([rule('login', 'closed'), rule('reads', 'open')])
    const verdict = watch(limiter.decide(facts, { now: 0 }))
    await vi.advanceTimersByTimeAsync(999)
    expect(verdict.settled).toBe(false)
    await vi.advanceTimersByTimeAsync(1)
    expect(verdict.value).toMatchObject({ allowed: false, reason: 'store-unavailable' })
    expect(errors).toHaveLength(1)
    expect(errors[0]![0]).toMatchObject({
      code: 'ERR_RL_STORE_UNAVAILABLE',
      message: '[tollgate] the store did not answer consume within 1000 ms (storeTimeoutMs)',
    })
    expect(errors[0]![1]).toEqual({
      operation: 'consume',
      rules: ['login', 'reads'],
      failClosed: true,
    })
  })

  it('admits through a fail-open rule, and ignores the reply that comes later', async () => {
    const { limiter, answer, errors } = setup([rule('reads', 'open')], { storeTimeoutMs: 50 })
    const verdict = watch(limiter.decide(facts, { now: 0 }))
    await vi.advanceTimersByTimeAsync(50)
    expect(verdict.value).toMatchObject({ allowed: true, storeFailed: true })
    answer()
    await flush()
    expect(errors).toHaveLength(1)
    // Fail-open: no decisions from the store, so no quota headers; the late reply changes nothing.
    expect((verdict.value as Verdict).decisions).toEqual([])
  })

  it('times check and refund the same way', async () => {
    const { limiter, answer, errors } = setup([rule('login', 'closed')], { storeTimeoutMs: 10 })
    const checked = watch(limiter.check('ip:192.0.2.1', 'login', { now: 0 }))
    await vi.advanceTimersByTimeAsync(10)
    expect(checked.value).toMatchObject({ allowed: false, storeFailed: true })
    // A verdict the store did make, then a refund it never answers.
    const admitted = limiter.decide(facts, { now: 0 })
    answer()
    const verdict = await admitted
    expect(verdict.allowed).toBe(true)
    const refunded = watch(limiter.refund(verdict, { now: 0 }))
    await vi.advanceTimersByTimeAsync(10)
    expect(refunded.settled).toBe(true)
    expect(errors.map(([, context]) => context.operation)).toEqual(['consume', 'refund'])
  })

  it('leaves no timer behind once the store answers in time', async () => {
    const { limiter, answer, errors } = setup([rule('reads', 'open')])
    const verdict = limiter.decide(facts, { now: 0 })
    expect(vi.getTimerCount()).toBe(1)
    answer()
    expect(await verdict).toMatchObject({ allowed: true })
    expect((await verdict).decisions[0]).toMatchObject({ remaining: 4 } as Partial<RuleDecision>)
    expect(vi.getTimerCount()).toBe(0)
    expect(errors).toEqual([])
  })

  it('sets no timer for a store that bounds its own calls, unless storeTimeoutMs is given', async () => {
    const own = heldStore()
    const bounded = createLimiter({
      rules: [rule('reads', 'open')],
      store: { ...own.store, timeoutMs: 3000 },
    })
    const pending = bounded.decide(facts, { now: 0 })
    expect(vi.getTimerCount()).toBe(0)
    own.answer()
    expect(await pending).toMatchObject({ allowed: true })
    const timed = createLimiter({
      rules: [rule('reads', 'open')],
      store: { ...heldStore().store, timeoutMs: 3000 },
      storeTimeoutMs: 100,
      logger: false,
    })
    const verdict = watch(timed.decide(facts, { now: 0 }))
    expect(vi.getTimerCount()).toBe(1)
    await vi.advanceTimersByTimeAsync(100)
    expect(verdict.value).toMatchObject({ allowed: true, storeFailed: true })
  })

  it.each([0, Number.NaN, Number.POSITIVE_INFINITY])(
    'times a store whose timeoutMs is %s, which bounds nothing',
    async (timeoutMs) => {
      const limiter = createLimiter({
        rules: [rule('reads', 'open')],
        store: { ...heldStore().store, timeoutMs },
        logger: false,
      })
      const verdict = watch(limiter.decide(facts, { now: 0 }))
      await vi.advanceTimersByTimeAsync(1000)
      expect(verdict.value).toMatchObject({ allowed: true, storeFailed: true })
    },
  )

  it('reports a refund reply that cannot be read, without throwing to the caller', async () => {
    const { limiter, answer, errors } = setup([rule('reads', 'open')])
    const admitted = limiter.decide(facts, { now: 0 })
    answer()
    const verdict = await admitted
    const broken = Promise.resolve()
    Object.defineProperty(broken, 'then', {
      get() {
        throw new Error('no then')
      },
    })
    ;(limiter.store as { refund: unknown }).refund = () => broken
    expect(() => limiter.refund(verdict, { now: 0 })).not.toThrow()
    expect(errors.map(([error, context]) => [context.operation, (error as Error).message])).toEqual(
      [['refund', 'no then']],
    )
  })

  it('sets no timer for a synchronous store', () => {
    const limiter = createLimiter({ rules: [rule('reads', 'open')] })
    expect(limiter.decide(facts, { now: 0 })).toMatchObject({ allowed: true })
    expect(vi.getTimerCount()).toBe(0)
  })

  it('waits as long as the store takes with storeTimeoutMs: false', async () => {
    const { limiter, answer, errors } = setup([rule('login', 'closed')], { storeTimeoutMs: false })
    const verdict = watch(limiter.decide(facts, { now: 0 }))
    await vi.advanceTimersByTimeAsync(3_600_000)
    expect(verdict.settled).toBe(false)
    answer()
    await flush()
    expect(verdict.value).toMatchObject({ allowed: true })
    expect(errors).toEqual([])
  })

  it.each([0, -1, 1.5, 2 ** 31, Number.NaN, '1000', true])(
    'refuses storeTimeoutMs: %j at start-up, naming the option',
    (value) => {
      expect(() =>
        createLimiter({ rules: [rule('r', 'open')], storeTimeoutMs: value as number }),
      ).toThrow(/storeTimeoutMs: expected a whole number of ms from 1 to 2147483647, got /)
    },
  )
})
