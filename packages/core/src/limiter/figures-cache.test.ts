// Per-client figures' lookups: remembered for cacheFor on the limiter's clock, one at a time per
// client, bounded, and never an error for a request when they fail.
import { describe, expect, it } from 'vitest'
import type { RuleConfig } from '../rules/types.js'
import { memoryStore } from '../store/memory-store.js'
import type { Timers } from '../wait/scheduler.js'
import { createLimiter } from './create-limiter.js'
import type { FiguresSource } from './figures-option.js'
import { limiterOperations } from './operator.js'
import type { RequestFacts, Verdict } from './types.js'

const RULE: RuleConfig = {
  id: 'per-key',
  match: { identity: 'api_key' },
  algorithm: 'token_bucket',
  rate: 1,
  period: '1h',
  burst: 5,
}
const facts = (key: string, plan?: string): RequestFacts => ({
  method: 'GET',
  path: '/',
  identities: { api_key: key },
  plan,
})

/** A clock and timers that move only when the test moves them. */
function manual() {
  let time = 1_000_000
  const armed = new Map<number, { at: number; run: () => void }>()
  let id = 0
  const timers: Timers = {
    setTimeout: (run, ms) => {
      armed.set(++id, { at: time + ms, run })
      return id
    },
    clearTimeout: (handle) => void armed.delete(handle as number),
  }
  return {
    clock: { now: () => time },
    timers,
    armed,
    advance(ms: number) {
      time += ms
      for (const [key, timer] of [...armed]) {
        if (timer.at > time) continue
        armed.delete(key)
        timer.run()
      }
    },
  }
}

function setup(source: Partial<FiguresSource> & Pick<FiguresSource, 'of'>) {
  const time = manual()
  const warnings: string[] = []
  const limiter = createLimiter({
    rules: [RULE],
    store: memoryStore({ seed: 3 }),
    clock: time.clock,
    timers: time.timers,
    logger: { warn: (line) => warnings.push(line) },
    figures: { 'per-key': { cacheFor: '1m', ...source } },
  })
  const decide = async (key = 'k1', plan?: string) =>
    ((await limiter.decide(facts(key, plan))) as Verdict).decisions[0]!
  return { limiter, time, warnings, decide }
}

/** A lookup the test answers: each call waits until `answer` or `fail`. */
function deferredLookups() {
  const calls: { resolve: (v: unknown) => void; reject: (e: unknown) => void }[] = []
  const of = () =>
    new Promise<never>((resolve, reject) => {
      calls.push({ resolve: resolve as never, reject })
    })
  return { calls, of }
}

describe('per-client figures: the cache', () => {
  it('looks a client up once per cacheFor, on the limiter clock', async () => {
    let burst = 10
    let lookups = 0
    const { time, decide } = setup({
      of: async () => {
        lookups++
        return { burst }
      },
    })
    expect((await decide()).limit).toBe(10)
    burst = 20
    time.advance(59_999)
    expect((await decide()).limit).toBe(10)
    expect(lookups).toBe(1)
    time.advance(1)
    expect((await decide()).limit).toBe(20)
    expect(lookups).toBe(2)
  })

  it('decides synchronously when the lookup answers synchronously or is remembered', async () => {
    const { limiter } = setup({ of: () => ({ burst: 10 }) })
    const verdict = limiter.decide(facts('k1'))
    expect(verdict).not.toBeInstanceOf(Promise)
    expect((verdict as Verdict).decisions[0]!.limit).toBe(10)
  })

  it('coalesces the lookups of one client: requests arriving meanwhile wait for the same one', async () => {
    const lookups = deferredLookups()
    const { limiter } = setup({ of: lookups.of })
    const waiting = [1, 2, 3].map(() => limiter.decide(facts('k1')) as Promise<Verdict>)
    expect(lookups.calls).toHaveLength(1)
    lookups.calls[0]!.resolve({ burst: 10 })
    const verdicts = await Promise.all(waiting)
    expect(verdicts.map((v) => v.decisions[0]!.remaining)).toEqual([9, 8, 7])
  })

  it('looks up again when the plan changes (an upgrade), and carries what was used', async () => {
    const { decide } = setup({ of: ({ plan }) => (plan === 'pro' ? { burst: 50 } : undefined) })
    await decide('k1', 'free')
    await decide('k1', 'free')
    const upgraded = await decide('k1', 'pro')
    expect([upgraded.limit, upgraded.remaining]).toEqual([50, 47])
  })

  it('keeps the last figures when a lookup throws, rejects or times out; warns once and counts', async () => {
    let mode: 'ok' | 'throw' | 'reject' | 'hang' = 'ok'
    const { limiter, time, warnings, decide } = setup({
      of: () => {
        if (mode === 'throw') throw new Error('db down')
        if (mode === 'reject') return Promise.reject(new Error('db down'))
        if (mode === 'hang') return new Promise(() => {})
        return Promise.resolve({ burst: 10 })
      },
      cacheFor: '10s',
      timeout: '500ms',
    })
    expect((await decide()).limit).toBe(10)
    for (const failing of ['throw', 'reject', 'hang'] as const) {
      mode = failing
      time.advance(10_000)
      const pending = decide()
      if (failing === 'hang') time.advance(500)
      expect((await pending).limit, failing).toBe(10)
    }
    expect(limiter.figuresRefused).toBe(3)
    expect(warnings.filter((w) => w.includes('WARN_FIGURES_REFUSED')).length).toBeGreaterThan(0)
    expect(warnings.every((w) => w.includes('rule "per-key"'))).toBe(true)
    // Tried again after at most 5 s, not after cacheFor.
    mode = 'ok'
    time.advance(5000)
    expect((await decide()).limit).toBe(10)
    expect(limiter.figuresRefused).toBe(3)
  })

  it('decides a client that never had figures by the rule’s own when its lookup fails', async () => {
    const { limiter, time, decide } = setup({
      of: () => new Promise(() => {}),
      timeout: '1s',
    })
    const pending = decide()
    time.advance(1000)
    expect((await pending).limit).toBe(5)
    expect(limiter.figuresRefused).toBe(1)
  })

  it('refuses figures the rule would refuse (validated like its own fields), and keeps the last', async () => {
    let figures: unknown = { burst: 10 }
    const { limiter, time, warnings, decide } = setup({ of: () => figures as never })
    expect((await decide()).limit).toBe(10)
    for (const bad of [{ burst: 0 }, { limit: 3 }, { period: 60 }, 'ten', { burst: 1.5 }]) {
      figures = bad
      time.advance(60_000)
      expect((await decide()).limit, JSON.stringify(bad)).toBe(10)
    }
    expect(limiter.figuresRefused).toBe(5)
    const text = warnings.join('\n')
    expect(text).toContain('burst')
    expect(text).toContain('"limit" is not a figure of a token_bucket rule')
    expect(text).toContain('bare number has no unit')
  })

  it('refuses a capacity below what a request costs', async () => {
    const limiter = createLimiter({
      rules: [{ ...RULE, cost: 3 } as RuleConfig],
      store: memoryStore({ seed: 3 }),
      logger: false,
      figures: { 'per-key': { of: () => ({ burst: 2 }) } },
    })
    const verdict = (await limiter.decide(facts('k1'), { now: 0 })) as Verdict
    expect(verdict.decisions[0]!.limit).toBe(5)
    expect(limiter.figuresRefused).toBe(1)
  })

  it('keeps at most maxClients, dropping the oldest looked up', async () => {
    let lookups = 0
    const { decide } = setup({
      of: () => {
        lookups++
        return { burst: 10 }
      },
      maxClients: 2,
    })
    for (const key of ['a', 'b', 'a', 'c', 'b', 'a']) await decide(key)
    // a, b looked up; a remembered; c drops a; b remembered; a looked up again (drops b).
    expect(lookups).toBe(4)
  })

  it('gives the lookup the rule, key, identity values and plan', async () => {
    const seen: unknown[] = []
    const { decide } = setup({
      of: (client) => {
        seen.push(client)
        return undefined
      },
    })
    await decide('k_123', 'pro')
    expect(seen).toEqual([
      {
        rule: 'per-key',
        key: 'api_key:k_123',
        identities: { api_key: 'k_123' },
        plan: 'pro',
      },
    ])
  })

  it('decides a request lacking the rule’s identity by the rule’s own figures, without a lookup', async () => {
    let lookups = 0
    const { limiter } = setup({
      of: () => {
        lookups++
        return { burst: 10 }
      },
    })
    const verdict = (await limiter.decide({
      method: 'GET',
      path: '/',
      identities: { ip: '203.0.113.7' },
    })) as Verdict
    expect([verdict.decisions[0]!.key, verdict.decisions[0]!.limit]).toEqual(['ip:203.0.113.7', 5])
    expect(lookups).toBe(0)
  })
})

describe('per-client figures: state under them', () => {
  it('refunds and resets a key under the figures it was charged with', async () => {
    const { limiter, decide } = setup({ of: () => ({ burst: 10 }) })
    const verdict = (await limiter.decide(facts('k1'))) as Verdict
    expect(verdict.decisions[0]!.remaining).toBe(9)
    await limiter.refund(verdict)
    expect((await decide()).remaining).toBe(9)
    await decide()
    await limiterOperations(limiter).reset('api_key:k1', 'per-key')
    expect((await decide()).remaining).toBe(9)
  })
})

describe('per-client figures across limiter.update', () => {
  it('keeps each client’s own figures and state when the rule’s own change, and refuses them on a rule that can no longer take them', async () => {
    let warned = ''
    const limiter = createLimiter({
      rules: [RULE],
      store: memoryStore({ seed: 3 }),
      logger: { warn: (line) => (warned += line) },
      figures: {
        'per-key': {
          of: ({ identities }) => (identities['api_key'] === 'pro' ? { burst: 20 } : undefined),
        },
      },
    })
    const decide = (key: string) =>
      (limiter.decide(facts(key), { now: 0 }) as Verdict).decisions[0]!
    decide('pro')
    decide('free')
    limiter.update!([{ ...RULE, burst: 8 } as RuleConfig])
    // The free client carries into the rule's new figures; the pro client keeps its own.
    expect([decide('free').limit, decide('free').remaining]).toEqual([8, 5])
    expect([decide('pro').limit, decide('pro').remaining]).toEqual([20, 17])
    limiter.update!([
      { id: 'per-key', match: { identity: 'api_key' }, algorithm: 'concurrency', limit: 2 },
    ])
    const verdict = (await limiter.decide(facts('pro'), { now: 60_000 })) as Verdict
    expect(verdict.decisions[0]!.limit).toBe(2)
    expect(limiter.figuresRefused).toBe(1)
    expect(warned).toContain('is a concurrency rule')
  })
})
