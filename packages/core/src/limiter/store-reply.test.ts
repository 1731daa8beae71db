/**
 * A store that answers, but with something the limiter cannot use, has failed like one that
 * throws: each rule's `onStoreError` decides, and nothing turns into a 500 further down (the
 * responder, the adapters). See store-failure.test.ts for stores that throw or reject.
 */
import { describe, expect, it } from 'vitest'
import { createAdapterKit } from '../adapter/kit.js'
import { MAX_TIME_MS } from '../algorithms/integer.js'
import { isRateLimitError } from '../errors.js'
import { createResponder } from '../response/responder.js'
import { memoryStore } from '../store/memory-store.js'
import type { Outcome, Store } from '../store/types.js'
import { createLimiter } from './create-limiter.js'
import { messageOf } from './report.js'
import { failureRule, PAYMENT } from './test-stores.js'
import type { StoreErrorContext, Verdict } from './types.js'

const rule = failureRule
const facts = PAYMENT
const NOW = 1_700_000_000_000

/** What a correct store answers for one token-bucket charge. */
const GOOD = { allowed: true, remaining: 4, limit: 5, resetAfterMs: 1000, retryAfterMs: undefined }

/** A store answering `reply` to every consume, the way a store of each kind does. */
const SHAPES: readonly (readonly [string, (reply: () => unknown) => Store])[] = [
  ['synchronously', (reply) => ({ consume: () => reply() as Outcome, refund() {} })],
  ['through a promise', (reply) => ({ consume: async () => reply() as Outcome, refund() {} })],
  [
    'from consumeOne (the memory store’s fast path)',
    (reply) => {
      const consumeOne = () => (reply() as Outcome).decisions[0]
      return Object.assign(memoryStore(), { consumeOne })
    },
  ],
]

function setup(store: Store, onStoreError: 'open' | 'closed' = 'open') {
  const errors: [unknown, StoreErrorContext][] = []
  const limiter = createLimiter({
    rules: [rule('pay', onStoreError)],
    store,
    onError: (error, context) => errors.push([error, context]),
  })
  return { limiter, errors }
}

/** The verdict of a failed store under each policy, and a response that says so. */
async function expectStoreFailure(makeStore: () => Store) {
  for (const policy of ['open', 'closed'] as const) {
    const { limiter, errors } = setup(makeStore(), policy)
    const verdict = await limiter.decide(facts, { now: NOW })
    expect(verdict).toMatchObject({
      allowed: policy === 'open',
      reason: policy === 'open' ? undefined : 'store-unavailable',
      storeFailed: true,
      at: NOW,
    })
    expect(errors).toHaveLength(1)
    expect(errors[0]![1]).toEqual({
      operation: 'consume',
      rules: ['pay'],
      failClosed: policy === 'closed',
    })
    const response = createResponder().respond(verdict, verdict.at)
    expect(response.status).toBe(policy === 'open' ? undefined : 503)
    for (const [, value] of response.headers) expect(value).not.toMatch(/NaN|undefined/)
  }
}

function storeReplyError(errors: readonly [unknown, StoreErrorContext][]) {
  const error = errors[0]?.[0]
  expect(isRateLimitError(error) && error.code).toBe('ERR_RL_STORE_REPLY')
  return error as { readonly field?: string; readonly rule?: string; readonly message: string }
}

describe.each(SHAPES)('a store answering %s', (_shape, storeOf) => {
  it('with a good decision is believed (the check lets correct replies through)', async () => {
    const denied = { ...GOOD, allowed: false, remaining: 0, retryAfterMs: 0 }
    for (const [reply, allowed] of [
      [GOOD, true],
      [{ ...GOOD, retryAfterMs: 'ignored on an admission' }, true],
      [denied, false],
    ] as const) {
      const { limiter, errors } = setup(storeOf(() => ({ decisions: [reply], at: NOW })))
      const verdict = await limiter.decide(facts, { now: NOW })
      expect(verdict).toMatchObject({ allowed, storeFailed: false })
      expect(errors).toEqual([])
    }
  })

  // Each would otherwise reach the responder: a TypeError there (a 500), or NaN in a header.
  it.each([
    ['no fields at all', {}, 'allowed'],
    ['allowed as text', { ...GOOD, allowed: 'true' }, 'allowed'],
    ['allowed as a number', { ...GOOD, allowed: 1 }, 'allowed'],
    ['remaining as text', { ...GOOD, remaining: '4' }, 'remaining'],
    ['a negative remaining', { ...GOOD, remaining: -1 }, 'remaining'],
    ['a fractional remaining', { ...GOOD, remaining: 0.5 }, 'remaining'],
    ['a NaN remaining', { ...GOOD, remaining: Number.NaN }, 'remaining'],
    ['an infinite limit', { ...GOOD, limit: Number.POSITIVE_INFINITY }, 'limit'],
    ['a limit no structured field can carry', { ...GOOD, limit: 1e16 }, 'limit'],
    ['no resetAfterMs', { ...GOOD, resetAfterMs: undefined }, 'resetAfterMs'],
    ['a bigint resetAfterMs', { ...GOOD, resetAfterMs: 10n }, 'resetAfterMs'],
    ['a denial without retryAfterMs', { ...GOOD, allowed: false }, 'retryAfterMs'],
    [
      'a denial with a negative wait',
      { ...GOOD, allowed: false, retryAfterMs: -5 },
      'retryAfterMs',
    ],
  ])(
    'with %s fails by the rule’s policy, as ERR_RL_STORE_REPLY naming the field',
    async (_what, reply, field) => {
      const makeStore = () => storeOf(() => ({ decisions: [reply], at: NOW }))
      await expectStoreFailure(makeStore)
      const { limiter, errors } = setup(makeStore())
      await limiter.decide(facts, { now: NOW })
      expect(storeReplyError(errors)).toMatchObject({ rule: 'pay', field })
    },
  )

  it('fails limiter.check by the rule’s policy too, for a bad or missing decision', async () => {
    for (const reply of [{}, { ...GOOD, remaining: '4' }, null]) {
      for (const policy of ['open', 'closed'] as const) {
        const store = storeOf(() => ({ decisions: [reply], at: NOW }))
        const { limiter, errors } = setup(store, policy)
        const decision = await limiter.check('ip:192.0.2.1', 'pay', { now: NOW })
        expect(decision).toMatchObject({ allowed: policy === 'open', storeFailed: true })
        expect(storeReplyError(errors)).toBeDefined()
      }
    }
  })
})

describe('ERR_RL_STORE_REPLY for a bad decision', () => {
  it('names the rule, the field and the value it got', async () => {
    const reply = { decisions: [{ ...GOOD, resetAfterMs: 10n }], at: NOW }
    const { limiter, errors } = setup(SHAPES[0]![1](() => reply))
    await limiter.decide(facts, { now: NOW })
    expect(storeReplyError(errors).message).toBe(
      `[tollgate] the store answered resetAfterMs 10n for rule "pay", which the limiter cannot use`,
    )
  })
})

describe('a reply that is not a decision per charge', () => {
  it.each([
    ['null', null],
    ['a number', 7],
    ['decisions that are not an array', { decisions: 'none', at: NOW }],
    ['a null decision', { decisions: [null], at: NOW }],
    ['a decision that is text', { decisions: ['allowed'], at: NOW }],
    ['too many decisions', { decisions: [GOOD, GOOD], at: NOW }],
  ])('%s fails by the rule’s policy, as ERR_RL_STORE_REPLY', async (_what, reply) => {
    for (const [, storeOf] of SHAPES.slice(0, 2)) {
      await expectStoreFailure(() => storeOf(() => reply))
      const { limiter, errors } = setup(storeOf(() => reply))
      await limiter.decide(facts, { now: NOW })
      storeReplyError(errors)
    }
  })

  it('whose getters throw fails by the rule’s policy, with the getter’s error', async () => {
    const broken = new Error('getter broke')
    const replies = [
      {
        get decisions(): never {
          throw broken
        },
        at: NOW,
      },
      {
        decisions: [
          {
            ...GOOD,
            get remaining(): never {
              throw broken
            },
          },
        ],
        at: NOW,
      },
    ]
    for (const reply of replies) {
      for (const [, storeOf] of SHAPES.slice(0, 2)) {
        await expectStoreFailure(() => storeOf(() => reply))
        const { limiter, errors } = setup(storeOf(() => reply))
        await limiter.decide(facts, { now: NOW })
        expect(errors[0]?.[0]).toBe(broken)
      }
    }
  })
})

describe('the time a store answers at', () => {
  it.each([
    ['missing', undefined],
    ['NaN', Number.NaN],
    ['text', String(NOW)],
    ['fractional', NOW + 0.5],
    ['negative', -1],
    ['past MAX_TIME_MS', MAX_TIME_MS + 1],
  ])('%s fails by the rule’s policy: never X-RateLimit-Reset: NaN', async (_what, at) => {
    for (const [, storeOf] of SHAPES.slice(0, 2)) {
      const makeStore = () => storeOf(() => ({ decisions: [GOOD], at }))
      await expectStoreFailure(makeStore)
      const { limiter, errors } = setup(makeStore())
      await limiter.decide(facts, { now: NOW })
      expect(storeReplyError(errors).message).toContain('answered at')
    }
  })

  it('is the verdict’s when it is whole ms (a store with its own clock)', async () => {
    const { limiter } = setup(SHAPES[0]![1](() => ({ decisions: [GOOD], at: NOW + 7 })))
    expect((await limiter.decide(facts, { now: NOW })).at).toBe(NOW + 7)
  })
})

describe('a thenable store reply', () => {
  const broken = new Error('then broke')
  const outcome = { decisions: [GOOD], at: NOW }
  const thenables: readonly (readonly [string, () => unknown])[] = [
    [
      'whose then throws',
      () => ({
        // biome-ignore lint/suspicious/noThenProperty: a thenable is what is being tested
        then() {
          throw broken
        },
      }),
    ],
    [
      'whose then getter throws',
      () => ({
        // biome-ignore lint/suspicious/noThenProperty: a thenable is what is being tested
        get then(): never {
          throw broken
        },
      }),
    ],
    [
      'a promise whose constructor getter throws',
      () =>
        Object.defineProperty(Promise.resolve(outcome), 'constructor', {
          get() {
            throw broken
          },
        }),
    ],
  ]

  it.each(thenables)('%s fails by the rule’s policy, with its error', async (_what, reply) => {
    await expectStoreFailure(() => ({ consume: () => reply() as Outcome, refund() {} }))
    const { limiter, errors } = setup({ consume: () => reply() as Outcome, refund() {} })
    await limiter.decide(facts, { now: NOW })
    expect(errors[0]?.[0]).toBe(broken)
  })

  it('that calls back synchronously, twice, is decided once, by the first answer', async () => {
    const { limiter, errors } = setup({
      consume: () =>
        ({
          // biome-ignore lint/suspicious/noThenProperty: a thenable is what is being tested
          then(resolve: (value: Outcome) => void, reject: (error: unknown) => void) {
            resolve(outcome)
            reject(broken)
            resolve({ decisions: [], at: 0 })
            return 'not a promise'
          },
        }) as unknown as Outcome,
      refund() {},
    })
    const verdict = limiter.decide(facts, { now: NOW })
    expect(verdict).toBeInstanceOf(Promise)
    expect(await verdict).toMatchObject({ allowed: true, storeFailed: false, at: NOW })
    expect(errors).toEqual([])
  })
})

describe('a store error that cannot be turned into text', () => {
  const revoked = Proxy.revocable({}, {})
  revoked.revoke()
  const badMessage = new Error('hidden')
  Object.defineProperty(badMessage, 'message', {
    get() {
      throw new Error('message getter broke')
    },
  })
  const errors: readonly (readonly [string, unknown, string])[] = [
    ['a null-prototype object', Object.create(null), '(an unprintable object)'],
    ['a revoked proxy', revoked.proxy, '(an unprintable object)'],
    ['an Error whose message getter throws', badMessage, '(an unprintable object)'],
    ['an Error whose message is not text', Object.assign(new Error(), { message: 42 }), '42'],
    ['a symbol', Symbol('down'), 'Symbol(down)'],
    ['undefined', undefined, 'undefined'],
  ]

  it.each(errors)(
    '%s, thrown or rejected, fails by the rule’s policy and is logged',
    async (_what, error, text) => {
      const stores: Store[] = [
        {
          consume: () => {
            throw error
          },
          refund() {},
        },
        { consume: () => Promise.reject(error), refund() {} },
      ]
      for (const store of stores) {
        for (const policy of ['open', 'closed'] as const) {
          const warnings: string[] = []
          // No onError: the default warning is where the error is turned into text.
          const limiter = createLimiter({
            rules: [rule('pay', policy)],
            store,
            logger: { warn: (line) => warnings.push(line) },
          })
          const verdict: Verdict = await limiter.decide(facts, { now: NOW })
          expect(verdict).toMatchObject({ allowed: policy === 'open', storeFailed: true })
          expect(warnings).toHaveLength(1)
          expect(warnings[0]!.endsWith(`: ${text}`)).toBe(true)
        }
      }
    },
  )

  it('messageOf never throws, whatever it is given', () => {
    for (const [, error, text] of errors) expect(messageOf(error)).toBe(text)
    expect(messageOf(new Error('down'))).toBe('down')
    expect(messageOf({ toString: () => 'custom' })).toBe('custom')
    expect(
      messageOf({
        toString() {
          throw new Error('toString broke')
        },
      }),
    ).toBe('(an unprintable object)')
  })
})

describe('through the adapter kit', () => {
  const replies: readonly (readonly [string, () => unknown])[] = [
    ['malformed decisions', () => ({ decisions: [{}], at: NOW })],
    ['no time', () => ({ decisions: [GOOD] })],
    [
      'a thenable whose then throws',
      () => ({
        // biome-ignore lint/suspicious/noThenProperty: a thenable is what is being tested
        then() {
          throw new Error('then broke')
        },
      }),
    ],
    ['a null-prototype rejection', () => Promise.reject(Object.create(null))],
  ]

  it.each(replies)(
    '%s: 200 fail-open, 503 fail-closed, never a throw (a 500)',
    async (_what, reply) => {
      for (const [policy, status] of [
        ['open', undefined],
        ['closed', 503],
      ] as const) {
        const kit = createAdapterKit<null, null>(
          [rule('pay', policy)],
          { store: { consume: () => reply() as Outcome, refund() {} }, logger: false },
          {
            method: () => facts.method,
            path: () => facts.path,
            socketAddress: () => facts.identities.ip,
            header: () => undefined,
            user: () => undefined,
          },
        )
        const exchange = await kit.enter(null, null)!.ready
        expect(exchange.denial?.status).toBe(status)
        const fields: string[] = []
        exchange.writeFields(
          {
            putEntries: (_, entries) => fields.push(...entries.map(([name]) => name)),
            putVerdict: (_, verdict, write) =>
              write(verdict, { write: (name) => void fields.push(name) }),
          },
          null,
        )
        expect(fields).not.toContain('X-RateLimit-Reset')
      }
    },
  )
})
