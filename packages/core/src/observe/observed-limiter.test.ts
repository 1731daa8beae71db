import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
// Core cannot depend on test-utils (which depends on core): the shared rules, by path.
import { METRIC_RULES as RULES } from '../../../test-utils/src/metric-rules.js'
import { createLimiter } from '../limiter/create-limiter.js'
import { limiterOperations } from '../limiter/operator.js'
import { STORES } from '../limiter/test-stores.js'
import type { RequestFacts, Verdict } from '../limiter/types.js'
import type { ObservedEvent, RuleEvent } from './events.js'
import { observedLimiter } from './observed-limiter.js'

const at = (ip: string, path = '/', method = 'GET'): RequestFacts => ({
  method,
  path,
  identities: { ip },
})

function recorder() {
  const events: ObservedEvent[] = []
  return { events, observer: { observe: (event: ObservedEvent) => events.push(event) } }
}

const outcomes = (events: readonly ObservedEvent[]) =>
  events
    .filter((event): event is RuleEvent => event.type === 'rule')
    .map((event) => `${event.rule} ${event.outcome} ${event.charged}`)

describe.each(STORES)('observedLimiter over the %s', (_name, makeStore) => {
  it('reports every rule outcome of a scripted trace, and decides as the plain limiter', async () => {
    const { events, observer } = recorder()
    const limiter = observedLimiter({ rules: RULES, store: makeStore(), observers: [observer] })
    const plain = createLimiter({ rules: RULES, store: makeStore() })
    const trace = [at('a'), at('a', '/login', 'POST'), at('a', '/login', 'POST'), at('b')]
    for (const facts of trace) {
      const seen = await limiter.decide(facts, { now: 1000 })
      expect(seen).toEqual(await plain.decide(facts, { now: 1000 }))
    }
    expect(outcomes(events)).toEqual([
      'per-ip admitted 1',
      'per-ip admitted 1',
      'new-login admitted 1',
      'per-ip denied 0',
      'new-login shadow-denied 0',
      'per-ip admitted 1',
    ])
    expect(events.filter((event) => event.type === 'decision')).toHaveLength(4)
    const calls = events.filter((event) => event.type === 'store.call')
    // The memory store answers in less time than timing it would take: it is not timed.
    expect(calls).toHaveLength(makeStore === STORES[0]![1] ? 0 : 4)
    for (const call of calls) {
      expect(call).toMatchObject({ operation: 'consume', error: undefined })
      expect(call.durationMs).toBeGreaterThanOrEqual(0)
    }
  })

  it('reports the remaining and limit behind each admission', async () => {
    const { events, observer } = recorder()
    const limiter = observedLimiter({ rules: RULES, store: makeStore(), observers: [observer] })
    await limiter.decide(at('a'), { now: 0 })
    expect(events.find((event) => event.type === 'rule')).toMatchObject({
      remaining: 1,
      limit: 2,
      mode: 'enforce',
    })
  })
})

describe('observedLimiter and store failures', () => {
  const down = () => {
    throw new Error('connect ECONNREFUSED')
  }
  const broken = { consume: down, refund: down }

  it('reports a fail-open failure per rule, and keeps the app its onError and warnings', () => {
    const { events, observer } = recorder()
    const errors: string[] = []
    const warnings: string[] = []
    const limiter = observedLimiter({
      rules: RULES,
      store: broken,
      observers: [observer],
      onError: (_error, context) => errors.push(context.rules.join(',')),
      logger: { warn: (line) => warnings.push(line) },
    })
    expect(limiter.decide(at('a', '/login', 'POST'))).toMatchObject({ allowed: true })
    expect(errors).toEqual(['per-ip,new-login'])
    expect(outcomes(events)).toEqual([
      'per-ip store-failed-open 0',
      'new-login store-failed-open 0',
    ])
    expect(events.find((event) => event.type === 'store.error')).toMatchObject({
      operation: 'consume',
      store: 'custom',
      reason: 'error',
      failClosed: false,
    })
    expect(events.find((event) => event.type === 'store.call')).toMatchObject({ error: 'error' })
  })

  it('reports a fail-closed failure as closed for enforcing rules, open for shadow ones', async () => {
    const { events, observer } = recorder()
    const warnings: string[] = []
    const closed = RULES.map((rule) => ({ ...rule, onStoreError: 'closed' as const }))
    const limiter = observedLimiter({
      rules: closed,
      store: { consume: async () => down(), refund: async () => {} },
      observers: [observer],
      logger: { warn: (line) => warnings.push(line) },
    })
    expect(await limiter.decide(at('a', '/login', 'POST'))).toMatchObject({
      allowed: false,
      reason: 'store-unavailable',
    })
    expect(outcomes(events)).toEqual([
      'per-ip store-failed-closed 0',
      'new-login store-failed-open 0',
    ])
    expect(warnings).toHaveLength(1)
    expect(warnings[0]).toContain('WARN_STORE_FAILED')
  })
})

describe('observedLimiter', () => {
  it('reports a clock stepping back, by how far', () => {
    const { events, observer } = recorder()
    let now = 10_000
    const limiter = observedLimiter({
      rules: RULES,
      clock: { now: () => now },
      observers: [observer],
    })
    limiter.decide(at('a'))
    now = 7_500
    limiter.decide(at('a'))
    expect(events.filter((event) => event.type === 'clock.step')).toEqual([
      { type: 'clock.step', direction: 'backward', ms: 2500 },
    ])
    expect(limiter.clockStepsBack).toBe(1)
  })

  it('decides anyway when an observer throws, and says so once', () => {
    const warnings: string[] = []
    const limiter = observedLimiter({
      rules: RULES,
      logger: { warn: (line) => warnings.push(line) },
      observers: [
        {
          observe: () => {
            throw new Error('broken')
          },
        },
      ],
    })
    for (let i = 0; i < 3; i++) expect(limiter.decide(at('a'), { now: 0 })).toBeDefined()
    expect(limiter.decide(at('a'), { now: 0 })).toMatchObject({ allowed: false })
    expect(warnings).toEqual(['[tollgate] WARN_OBSERVER_THREW: an observer threw: broken'])
  })

  it('refuses what is not an observer, and unknown options, naming them', () => {
    expect(() => observedLimiter({ rules: RULES, observers: [{} as never] })).toThrow(
      'observers: observers[0] is not an observer',
    )
    expect(() =>
      observedLimiter({ rules: RULES, observers: [], storeTimeout: 5 } as never),
    ).toThrow('did you mean "storeTimeoutMs"?')
  })

  it('hands an observer only the kinds of event it counts, and times no store call nobody counts', () => {
    const decisions = recorder()
    const calls: string[] = []
    // A store of the app's own, synchronous: the kind whose calls are timed when counted.
    const store = STORES[1]![1]()
    const limiter = observedLimiter({
      rules: RULES,
      store,
      monotonic: {
        now: () => {
          calls.push('read')
          return 0
        },
      },
      observers: [{ events: ['decision'], observe: decisions.observer.observe }],
    })
    limiter.decide(at('a'), { now: 0 })
    expect(decisions.events.map((event) => event.type)).toEqual(['decision'])
    expect(calls).toEqual([])
    const all = recorder()
    const both = observedLimiter({
      rules: RULES,
      store,
      monotonic: { now: () => 0 },
      observers: [{ events: ['rule'], observe: () => {} }, all.observer],
    })
    both.decide(at('a'), { now: 0 })
    expect(all.events.map((event) => event.type)).toEqual(['store.call', 'rule', 'decision'])
    const memory = recorder()
    const untimed = observedLimiter({
      rules: RULES,
      monotonic: {
        now: () => {
          calls.push('read')
          return 0
        },
      },
      observers: [memory.observer],
    })
    untimed.decide(at('a'), { now: 0 })
    expect(memory.events.map((event) => event.type)).toEqual(['rule', 'decision'])
    expect(calls).toEqual([])
  })

  it('refuses an observer counting an unknown kind of event, naming it', () => {
    expect(() =>
      observedLimiter({ rules: RULES, observers: [{ events: ['queue'] as never, observe() {} }] }),
    ).toThrow(/observers\[0\]\.events: unknown event type "queue"/)
  })

  it('decides every trace exactly as the plain limiter does', () => {
    const request = fc.record({
      ip: fc.constantFrom('a', 'b', 'c'),
      login: fc.boolean(),
      advance: fc.nat(1500),
    })
    fc.assert(
      fc.property(fc.array(request, { maxLength: 40 }), (trace) => {
        const { events, observer } = recorder()
        const observed = observedLimiter({ rules: RULES, observers: [observer] })
        const plain = createLimiter({ rules: RULES })
        let now = 0
        let decisions = 0
        for (const step of trace) {
          now += step.advance
          const facts = step.login ? at(step.ip, '/login', 'POST') : at(step.ip)
          const verdict = plain.decide(facts, { now }) as Verdict
          expect(observed.decide(facts, { now })).toEqual(verdict)
          decisions += verdict.decisions.length
        }
        expect(events.filter((event) => event.type === 'rule')).toHaveLength(decisions)
      }),
    )
  })
})

describe('observedLimiter with a penalised rule', () => {
  it('decides as the plain limiter, blocks included, and keeps the store’s operator calls', async () => {
    const rule = {
      id: 'login',
      match: { identity: 'ip' },
      algorithm: 'fixed_window',
      limit: 1,
      window: '10s',
      penalty: { block: '1m' },
    } as const
    const { observer } = recorder()
    const limiter = observedLimiter({
      rules: [rule],
      store: STORES[2]![1](),
      observers: [observer],
    })
    const plain = createLimiter({ rules: [rule], store: STORES[2]![1]() })
    for (const now of [0, 1, 30_000, 60_001]) {
      const seen = (await limiter.decide(at('a'), { now })) as Verdict
      expect(seen).toEqual(await plain.decide(at('a'), { now }))
    }
    const peeked = await limiterOperations(
      observedLimiter({ rules: [rule], observers: [observer] }),
    ).peek('ip:a', 'login', { now: 0 })
    expect(peeked.offences).toBe(0)
  })
})
