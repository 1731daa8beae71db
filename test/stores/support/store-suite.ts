/*
 * The store conformance suite: what every store promises, whatever it keeps its state in. Each
 * store's test file calls `describeStore` with a factory for a fresh, empty store, the way
 * unstorage runs one driver suite against every driver; what only one store does (fingerprints,
 * expiry, slots, scripts) stays in that store's own file.
 */
import {
  type Algorithm,
  type Charge,
  type Decision,
  reservable,
  type Store,
  step,
} from '@tollgate/core/store'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { describeCarryContract } from './carry-suite.js'
import { describePenaltyContract } from './penalty-suite.js'
import {
  AWKWARD_KEYS,
  EVERY_SHAPE,
  expectSameAsReference,
  normalise,
  ONE_OF_EACH,
  traceArb,
} from './trace.js'

export type StoreUnderTest = {
  /** A fresh store that shares no state with any other one it made (own prefix, own table). */
  readonly create: () => Store
  /** False for the reference store itself, the oracle the trace test compares with. */
  readonly compareWithReference?: boolean
  /** Random traces to run against the reference store. */
  readonly traceRuns?: number
}

const charge = (
  algorithm: Algorithm,
  {
    // One rule per algorithm shape: EVERY_SHAPE has two fixed and two sliding windows.
    rule = `rule-${algorithm.name}-${EVERY_SHAPE.indexOf(algorithm)}`,
    key = 'ip:203.0.113.7',
    cost = 1,
    shadow = false,
  } = {},
): Charge => ({ rule, algorithm, key, cost, shadow })

/** What the pure algorithm answers for the same costs on one key, all at `now`. */
function expectedAlone(algorithm: Algorithm, costs: readonly number[], now: number): Decision[] {
  let state: readonly number[] | undefined
  return costs.map((cost) => {
    const result = step(algorithm, state, cost, now)
    state = result.state
    return result.decision
  })
}

export function describeStore(name: string, subject: StoreUnderTest): void {
  describe(`${name}: the store contract`, () => {
    const fresh = () => subject.create()
    const consume = async (store: Store, charges: readonly Charge[], now: number) =>
      normalise((await store.consume(charges, now)).decisions)

    it('decides each algorithm on one key exactly as the algorithm does, and answers at the time given', async () => {
      const store = fresh()
      for (const algorithm of EVERY_SHAPE) {
        const costs = [1, 5, 0, 14, 1, 3, 0]
        const expected = normalise(expectedAlone(algorithm, costs, 120_000))
        const actual: Decision[] = []
        for (const cost of costs) {
          const outcome = await store.consume([charge(algorithm, { cost })], 120_000)
          expect(outcome.at).toBe(120_000)
          actual.push(...normalise(outcome.decisions))
        }
        expect(actual, algorithm.name).toEqual(expected)
        // Exactly the limit passed (1 + 5 + 14 of 20), and the next unit is refused.
        expect(actual.map((d) => d.allowed)).toEqual([true, true, true, true, false, false, true])
      }
    })

    it('writes nothing for a denied request, on any rule, and reports the others at cost 0', async () => {
      const store = fresh()
      const tight = { ...charge(ONE_OF_EACH[0]!, { rule: 'tight', key: 'a', cost: 20 }) }
      await store.consume([tight], 0)
      const others = EVERY_SHAPE.map((algorithm) => charge(algorithm, { key: 'b', cost: 3 }))
      const denied = await consume(store, [{ ...tight, cost: 1 }, ...others], 0)
      expect(denied[0]?.allowed).toBe(false)
      expect(denied.slice(1).map((d) => [d.allowed, d.remaining])).toEqual(
        EVERY_SHAPE.map((a) => [true, a.limit]),
      )
      // Every other rule still has its whole allowance: the same request alone takes 3 of 20.
      const alone = await consume(store, others, 0)
      expect(alone.map((d) => d.remaining)).toEqual(EVERY_SHAPE.map((a) => a.limit - 3))
    })

    it('never lets a shadow charge deny, and writes a shadow charge only when it passes', async () => {
      const store = fresh()
      const algorithm = ONE_OF_EACH[4]! // sliding log, 20 per minute
      const watch = charge(algorithm, { rule: 'watch', cost: 15, shadow: true })
      const enforce = charge(ONE_OF_EACH[0]!, { rule: 'enforce', cost: 1 })
      const first = await consume(store, [enforce, watch], 0)
      expect(first.map((d) => d.allowed)).toEqual([true, true])
      // The shadow rule would deny this one: the request passes, and the shadow takes nothing.
      const second = await consume(store, [enforce, watch], 0)
      expect(second.map((d) => [d.allowed, d.remaining])).toEqual([
        [true, 18],
        [false, 5],
      ])
      const inspect = await consume(store, [{ ...watch, cost: 0 }], 0)
      expect(inspect[0]?.remaining).toBe(5)
    })

    it('keeps every key and every rule apart, whatever the key holds', async () => {
      const store = fresh()
      const algorithm = ONE_OF_EACH[3]! // fixed window, 20 per minute
      for (const [i, key] of AWKWARD_KEYS.entries()) {
        const decisions = await consume(store, [charge(algorithm, { key, cost: 1 + (i % 5) })], 0)
        expect(decisions[0]?.remaining, JSON.stringify(key.slice(0, 20))).toBe(19 - (i % 5))
      }
      for (const rule of ['per-ip', 'per{ip}', 'per-ip\n']) {
        const decisions = await consume(store, [charge(algorithm, { rule, cost: 2 })], 0)
        expect(decisions[0]?.remaining, rule).toBe(18)
      }
    })

    it('gives back a refunded charge, and a refund for a key it never saw changes nothing', async () => {
      const store = fresh()
      for (const algorithm of EVERY_SHAPE) {
        const taken = charge(algorithm, { cost: 7 })
        await store.consume([taken], 60_000)
        await store.refund([taken], 60_000, 60_000)
        const after = await consume(store, [{ ...taken, cost: 0 }], 60_000)
        expect(after[0]?.remaining, algorithm.name).toBe(20)
        await store.refund([charge(algorithm, { key: 'never-seen', cost: 5 })], 60_000, 60_000)
        const unseen = await consume(
          store,
          [charge(algorithm, { key: 'never-seen', cost: 0 })],
          60_000,
        )
        expect(unseen[0]?.remaining, algorithm.name).toBe(20)
      }
    })

    // Optional in the contract (a limiter whose rules settle refuses a store without it). Asked
    // of the store the test makes: a subject's store may need set-up that runs before each test.
    it('settles reservations in one call as each algorithm settles them, debts included', async (context) => {
      const store = fresh()
      if (typeof store.settle !== 'function') return context.skip()
      for (const [index, shape] of EVERY_SHAPE.entries()) {
        const algorithm = reservable(shape)
        // Three keys of one rule: estimates of 7 that really cost 2, 7 and 45. The rule is named
        // by its shape: reservable() may return a copy, which EVERY_SHAPE does not hold.
        const rule = `settled-${index}`
        const taken = [2, 7, 45].map((actual, i) => ({
          ...charge(algorithm, { rule, key: `k${i}`, cost: 7 }),
          actual,
        }))
        for (const one of taken) await store.consume([one], 60_000)
        await store.settle!(taken, 60_000, 60_500)
        const expected = taken.map(({ actual }) => {
          const state = new Array<number>(algorithm.stateSize).fill(0)
          algorithm.init(state, 0, 60_000)
          algorithm.decide(state, 0, 7, 60_000, true)
          algorithm.settle!(state, 0, 7, actual, 60_000, 60_500)
          return normalise([algorithm.decide(state, 0, 1, 61_000, false)])[0]
        })
        const after = await consume(
          store,
          taken.map((one) => ({ ...one, cost: 0 })),
          61_000,
        )
        const probe = await Promise.all(
          taken.map(async (one) => (await consume(store, [{ ...one, cost: 1 }], 61_000))[0]),
        )
        expect(probe, algorithm.name).toEqual(expected)
        expect(after.map((d) => d.remaining)).toEqual(
          expected.map((d) => d!.remaining + (d!.allowed ? 1 : 0)),
        )
      }
    })

    describePenaltyContract(fresh)
    describeCarryContract(fresh)

    it('refuses a cost above the rule’s capacity before writing anything', async () => {
      const store = fresh()
      const roomy = charge(ONE_OF_EACH[1]!, { cost: 2 })
      for (const algorithm of EVERY_SHAPE) {
        const tooMuch = charge(algorithm, { key: 'k', cost: algorithm.limit + 1 })
        await expect(
          Promise.resolve().then(() => store.consume([roomy, tooMuch], 0)),
        ).rejects.toMatchObject({ code: 'ERR_RL_COST_EXCEEDS_CAPACITY' })
      }
      expect((await consume(store, [{ ...roomy, cost: 0 }], 0))[0]?.remaining).toBe(20)
    })

    it.skipIf(subject.compareWithReference === false)(
      'decides random traces exactly as the reference store, refunds included',
      async () => {
        // Several identities: on a cluster, requests often span slots.
        const keys = ['ip:203.0.113.7', 'api_key:k_1', 'user:42', 'ip:198.51.100.1', '{', '']
        await fc.assert(
          fc.asyncProperty(traceArb(keys, 25), (trace) => expectSameAsReference(fresh(), trace)),
          { numRuns: subject.traceRuns ?? 100 },
        )
      },
    )
  })
}
