// The time a middleware composed by createRateLimit reads: `Date.now()` directly without the
// `clock: clockReader` part (a step back still counted and warned about once), a clock of the
// app's own, each reading checked, with it; and `rateLimit`'s, which has the part.
import { afterEach, describe, expect, it, vi } from 'vitest'
import { tokenBucket } from '../algorithms/index.js'
import type { Clock } from '../clock.js'
import { clockReader } from '../limiter/decide.js'
import type { Limiter, Verdict } from '../limiter/types.js'
import type { RuleConfig } from '../rules/types.js'
import { mapStore } from '../store/map-store.js'
import type { Shared } from './exchange.js'
import { composeAdapterKit, createAdapterKit } from './kit.js'

const START = 1_800_000_000_000
const RULES: RuleConfig[] = [
  { id: 'per-ip', match: { identity: 'ip' }, algorithm: 'token_bucket', rate: 1, burst: 5 },
]
const FRAMEWORK = {
  method: () => 'GET',
  path: () => '/',
  socketAddress: () => '203.0.113.7',
  header: () => undefined,
  user: () => undefined,
}
const REQUEST = { method: 'GET', path: '/', identities: { ip: '203.0.113.7' } }
const algorithms = { token_bucket: tokenBucket }

function warnings() {
  const lines: string[] = []
  return { lines, logger: { warn: (line: string) => void lines.push(line) } }
}

/** The limiter a kit decides with. */
const limiterOf = (kit: unknown): Limiter => (kit as Shared<unknown>).limiter

type Options = { clock?: Clock; logger?: false | { warn(line: string): void } }
const WITHOUT = (options: Options): Limiter =>
  limiterOf(composeAdapterKit({ algorithms, store: mapStore })(RULES, options, FRAMEWORK))
const WITH = (options: Options): Limiter =>
  limiterOf(
    composeAdapterKit({ algorithms, store: mapStore, clock: clockReader })(
      RULES,
      options,
      FRAMEWORK,
    ),
  )
const FULL = (options: Options): Limiter =>
  limiterOf(createAdapterKit(RULES, { ...options, store: mapStore() }, FRAMEWORK))

afterEach(() => {
  vi.restoreAllMocks()
})

describe.each([
  ['composed without clockReader', WITHOUT],
  ['composed with clockReader', WITH],
  ['rateLimit', FULL],
])('Date.now(), %s', (_name, make) => {
  it('places each decision, a given now first', () => {
    let now = START
    vi.spyOn(Date, 'now').mockImplementation(() => now)
    const limiter = make({ logger: false })
    expect(limiter.decide(REQUEST)).toMatchObject({ allowed: true, at: START })
    now += 1500
    expect(limiter.decide(REQUEST)).toMatchObject({ at: START + 1500 })
    expect(limiter.decide(REQUEST, { now: START + 2000.75 })).toMatchObject({ at: START + 2000 })
    expect(() => limiter.decide(REQUEST, { now: -1 })).toThrow(/ERR_RL_INVALID_TIME|now must be/)
  })

  it('counts each step back, warned about once, and hands out nothing for it', () => {
    let now = START
    vi.spyOn(Date, 'now').mockImplementation(() => now)
    const { lines, logger } = warnings()
    const limiter = make({ logger })
    for (let i = 0; i < 5; i++) limiter.decide(REQUEST)
    now -= 3 * 3_600_000
    const verdict = limiter.decide(REQUEST) as Verdict
    expect(verdict.allowed).toBe(false)
    expect(verdict.deciding?.retryAfterMs).toBe(1000)
    now += 1000
    limiter.decide(REQUEST)
    now -= 5
    limiter.decide(REQUEST)
    expect(limiter.clockStepsBack).toBe(2)
    expect(lines).toEqual(['[tollgate] WARN_CLOCK_STEPPED_BACK: the clock stepped back'])
  })
})

describe.each([
  ['composed with clockReader', WITH],
  ['rateLimit', FULL],
])("a clock of the app's own, %s", (_name, make) => {
  it('is read, a fraction floored', () => {
    const limiter = make({ clock: { now: () => START + 0.9 }, logger: false })
    expect(limiter.decide(REQUEST)).toMatchObject({ allowed: true, at: START })
  })

  it('that fails is decided as a store failure, warned about once', () => {
    const { lines, logger } = warnings()
    const limiter = make({ clock: { now: () => Number.NaN }, logger })
    expect(limiter.decide(REQUEST)).toMatchObject({ allowed: true, storeFailed: true })
    expect(limiter.decide(REQUEST)).toMatchObject({ allowed: true, storeFailed: true })
    expect(lines).toEqual([
      "[tollgate] WARN_CLOCK_FAILED: clock.now() gave no time; each rule's onStoreError decides until it does",
    ])
  })
})

describe('the clock part', () => {
  it('is refused unless it is clockReader', () => {
    expect(() => composeAdapterKit({ algorithms, store: mapStore, clock: true as never })).toThrow(
      '[tollgate] clock: expected clockReader',
    )
  })
})
