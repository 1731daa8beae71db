import { beforeEach, describe, expect, it, vi } from 'vitest'
import type { RuleConfig } from '../rules/types.js'
import { memoryStore } from '../store/memory-store.js'
import type { Framework, KitOptions } from './kit.js'

type Req = { readonly path: string }

const framework: Framework<Req> = {
  method: () => 'GET',
  path: (req) => req.path,
  socketAddress: () => '203.0.113.7',
  header: () => undefined,
  user: () => undefined,
}

const RULES: RuleConfig[] = [
  { id: 'per-ip', match: { identity: 'ip' }, algorithm: 'token_bucket', rate: 1, burst: 1 },
]

/** A fresh copy of the kit and of the watch's process-wide counts, for each test. */
let kits: typeof import('./kit.js')
let watch: typeof import('./creation-watch.js')
beforeEach(async () => {
  vi.resetModules()
  kits = await import('./kit.js')
  watch = await import('./creation-watch.js')
})

function setup() {
  // The injected clock: time moves only when a test says so.
  let now = 1_000_000
  const clock = {
    now: () => now,
    advance(ms: number) {
      now += ms
    },
  }
  const warnings: string[] = []
  const options: KitOptions<Req, undefined> = {
    clock,
    logger: { warn: (message) => void warnings.push(message) },
  }
  const make = (more: Partial<KitOptions<Req, undefined>> = {}) =>
    kits.createAdapterKit<Req, undefined>(RULES, { ...options, ...more }, framework)
  const send = (kit: ReturnType<typeof make>) => kit.enter({ path: '/' }, undefined)
  return { clock, warnings, make, send }
}

const PER_REQUEST = /WARN_LIMITER_PER_REQUEST: 10 rate limiters were each made for one request/

describe('a limiter made inside a request handler', () => {
  it('is reported once, when enough kits were each made for one request', () => {
    const { clock, warnings, make, send } = setup()
    const verdicts: boolean[] = []
    for (let i = 0; i < 3 * watch.PER_REQUEST_KITS; i++) {
      // What `(req, res, next) => rateLimit(rules)(req, res, next)` does: never refused.
      verdicts.push(send(make())?.verdict?.allowed ?? false)
      if (i === watch.PER_REQUEST_KITS - 2) expect(warnings).toEqual([])
      clock.advance(100)
    }
    expect(verdicts.every(Boolean)).toBe(true)
    expect(warnings).toHaveLength(1)
    expect(warnings[0]).toMatch(PER_REQUEST)
    expect(warnings[0]).toContain('make rateLimit(rules) once, outside any handler')
  })

  it('is not reported for middleware made at start-up, however many', () => {
    const { warnings, make, send } = setup()
    const made = Array.from({ length: 3 * watch.PER_REQUEST_KITS }, () => make())
    for (let round = 0; round < 3; round++) for (const kit of made) send(kit)
    expect(warnings).toEqual([])
  })

  it('is not reported for an app per case whose request comes after an await, as in tests', async () => {
    const { warnings, make, send } = setup()
    for (let i = 0; i < 3 * watch.PER_REQUEST_KITS; i++) {
      const kit = make()
      await Promise.resolve()
      send(kit)
    }
    expect(warnings).toEqual([])
  })

  it('is not reported for kits made lazily whose clients come back', () => {
    const { warnings, make, send } = setup()
    for (let i = 0; i < 3 * watch.PER_REQUEST_KITS; i++) {
      const kit = make() // one per tenant, say, on its first request
      send(kit)
      send(kit)
    }
    expect(warnings).toEqual([])
  })

  it('is not reported when the single-use kits are spread wider than the window', () => {
    const { clock, warnings, make, send } = setup()
    const gap = Math.ceil(watch.PER_REQUEST_WINDOW_MS / (watch.PER_REQUEST_KITS - 1)) + 1
    for (let i = 0; i < 3 * watch.PER_REQUEST_KITS; i++) {
      send(make())
      clock.advance(gap)
    }
    expect(warnings).toEqual([])
  })

  it('is not watched with a store of the app’s own, which a kit made per request still shares', () => {
    const { warnings, make, send } = setup()
    const store = memoryStore()
    for (let i = 0; i < 3 * watch.PER_REQUEST_KITS; i++) send(make({ store }))
    expect(warnings).toEqual([])
  })

  it('honours ignoreWarnings', () => {
    const { warnings, make, send } = setup()
    for (let i = 0; i < 3 * watch.PER_REQUEST_KITS; i++) {
      send(make({ ignoreWarnings: ['WARN_LIMITER_PER_REQUEST'] }))
    }
    expect(warnings).toEqual([])
  })

  it('costs a kit nothing after its second request: the plain entry is put back', () => {
    const { make, send } = setup()
    const kit = make()
    const first = kit.enter
    send(kit)
    const second = kit.enter
    send(kit)
    expect(second).not.toBe(first)
    expect(kit.enter).not.toBe(second)
    const plain = kit.enter
    send(kit)
    expect(kit.enter).toBe(plain)
  })
})
