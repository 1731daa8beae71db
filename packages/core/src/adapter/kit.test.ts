import { describe, expect, it } from 'vitest'
import type { HeaderEntries } from '../headers/types.js'
import { createLimiter } from '../limiter/create-limiter.js'
import type { RuleConfig } from '../rules/types.js'
import { memoryStore } from '../store/memory-store.js'
import type { Store } from '../store/types.js'
import {
  createAdapterKit,
  type FieldSink,
  type Framework,
  isPromise,
  type KitOptions,
} from './kit.js'

type Req = { readonly path: string; readonly headers: Record<string, string> }

const framework: Framework<Req> = {
  method: () => 'GET',
  path: (req) => req.path,
  socketAddress: () => '203.0.113.7',
  header: (req, name) => req.headers[name],
  user: () => undefined,
}

const RULES: RuleConfig[] = [
  { id: 'per-ip', match: { identity: 'ip' }, algorithm: 'token_bucket', rate: 1, burst: 2 },
]
const req: Req = { path: '/', headers: {} }

/** Collects what the kit writes, as entries, whichever sink method it takes. */
function collecting(): FieldSink<HeaderEntries[]> {
  return {
    putEntries: (into, entries) => void into.push(entries),
    putVerdict(into, verdict, write) {
      const entries: Array<readonly [string, string]> = []
      write(verdict, { write: (name, value) => entries.push([name, value]) })
      into.push(entries)
    },
  }
}

/** A memory store whose refunds are counted. */
function countingStore(): { store: Store; refunds: () => number } {
  const inner = memoryStore()
  let refunds = 0
  return {
    store: {
      consume: (charges, now) => inner.consume(charges, now),
      refund: (charges, chargedAt, now) => {
        refunds++
        return inner.refund(charges, chargedAt, now)
      },
    },
    refunds: () => refunds,
  }
}

function kitWith(options: KitOptions<Req, undefined>) {
  return createAdapterKit<Req, undefined>(RULES, { clock: { now: () => 0 }, ...options }, framework)
}

describe('createAdapterKit', () => {
  it('decides synchronously with a synchronous store: ready is the exchange itself', () => {
    const exchange = kitWith({}).enter(req, undefined)!
    expect(exchange.ready).toBe(exchange)
    expect(exchange.denial).toBeUndefined()
    const written: HeaderEntries[] = []
    exchange.writeFields(collecting(), written)
    expect(Object.fromEntries(written[0]!)['RateLimit']).toBe('"per-ip";r=1;t=1')
  })

  it('hands a skipped request back as undefined, counting nothing', () => {
    const kit = kitWith({ skip: (r) => r.path === '/health' })
    for (let i = 0; i < 5; i++)
      expect(kit.enter({ path: '/health', headers: {} }, undefined)).toBe(undefined)
    expect(kit.enter(req, undefined)!.denial).toBeUndefined()
  })

  it('decides later with an asynchronous store, and the exchange says so', async () => {
    const inner = memoryStore()
    const store: Store = {
      consume: async (charges, now) => inner.consume(charges, now),
      refund: async () => {},
    }
    const exchange = kitWith({ store }).enter(req, undefined)!
    expect(isPromise(exchange.ready)).toBe(true)
    expect(await exchange.ready).toBe(exchange)
    expect(exchange.verdict?.allowed).toBe(true)
  })

  it('gives an app that answers a denial itself the fields without Content-Type', () => {
    const answering = kitWith({ onLimited: () => {} })
    const plain = kitWith({})
    for (let i = 0; i < 2; i++) {
      answering.enter(req, undefined)
      plain.enter(req, undefined)
    }
    const own = answering.enter(req, undefined)!
    const theirs = plain.enter(req, undefined)!
    expect(own.denial?.status).toBe(429)
    expect(own.denialFields!.map(([name]) => name)).not.toContain('Content-Type')
    expect(theirs.denialFields!.map(([name]) => name)).toContain('Content-Type')
    const written: HeaderEntries[] = []
    own.writeFields(collecting(), written)
    expect(written).toEqual([own.denialFields])
  })

  it('refunds exactly once, on the first end, and never after an abort', () => {
    const { store, refunds } = countingStore()
    const kit = kitWith({ store, refund: 'failed' })
    expect(kit.watchesEnd).toBe(true)
    const ended = kit.enter(req, undefined)!
    ended.end(500)
    ended.end(500)
    ended.abort()
    expect(refunds()).toBe(1)
    const aborted = kit.enter(req, undefined)!
    aborted.abort()
    aborted.end(500)
    expect(refunds()).toBe(1)
    const succeeded = kit.enter(req, undefined)!
    succeeded.end(200)
    expect(refunds()).toBe(1)
  })

  it('reads refund as the statuses it names, a function, or refuses it', () => {
    const statuses = [100, 200, 204, 302, 399, 400, 404, 429, 500, 503]
    const refundedAt = (refund: KitOptions<Req, undefined>['refund']) =>
      statuses.filter((status) => {
        const { store, refunds } = countingStore()
        kitWith({ store, refund }).enter(req, undefined)!.end(status)
        return refunds() === 1
      })
    expect(refundedAt('failed')).toEqual([400, 404, 429, 500, 503])
    expect(refundedAt('succeeded')).toEqual([100, 200, 204, 302, 399])
    expect(refundedAt((status) => status === 302)).toEqual([302])
    expect(refundedAt(undefined)).toEqual([])
    for (const [value, shown] of [
      ['FAILED', '"FAILED"'],
      [true, 'true'],
      [null, 'null'],
      [400, '400'],
      [{}, '{}'],
    ] as const) {
      expect(() => kitWith({ refund: value as never })).toThrow(
        `[tollgate] refund: expected 'failed', 'succeeded' or a function, got ${shown}`,
      )
    }
  })

  it('refunds no denial, and watches no end without refunds', () => {
    const { store, refunds } = countingStore()
    const kit = kitWith({ store, refund: 'failed' })
    for (let i = 0; i < 2; i++) kit.enter(req, undefined)
    const denied = kit.enter(req, undefined)!
    expect(denied.denial).toBeDefined()
    denied.end(429)
    expect(refunds()).toBe(0)
    expect(kitWith({}).watchesEnd).toBe(false)
  })

  it('lists the fields it may send, with Access-Control-Expose-Headers when exposing them', () => {
    expect(kitWith({}).fieldNames).toContain('RateLimit')
    expect(kitWith({ exposeHeaders: true }).fieldNames).toContain('Access-Control-Expose-Headers')
  })

  it('refuses a hook of the adapter that is not a function, at start-up', () => {
    const options = { getConnInfo: 'yes' } as KitOptions<Req, undefined>
    expect(() =>
      createAdapterKit<Req, undefined>(RULES, options, { ...framework, hooks: ['getConnInfo'] }),
    ).toThrow(expect.objectContaining({ code: 'ERR_RL_INVALID_OPTION', field: 'getConnInfo' }))
  })
})

describe('what the kit reads of a request', () => {
  const PER_IP: RuleConfig = {
    id: 'per-ip',
    match: { identity: 'ip' },
    algorithm: 'fixed_window',
    limit: 10,
    window: '1s',
  }
  const PER_KEY: RuleConfig = { ...PER_IP, id: 'per-key', match: { identity: 'api_key' } }
  const PER_USER: RuleConfig = { ...PER_IP, id: 'per-user', match: { identity: ['user', 'ip'] } }

  /** A kit whose framework records the headers and users it was asked for. */
  function reading(rules: readonly RuleConfig[] | ReturnType<typeof createLimiter>, hooks = {}) {
    const asked: string[] = []
    const recording: Framework<Req> = {
      ...framework,
      header: (r, name) => {
        asked.push(name)
        return r.headers[name]
      },
      user: () => {
        asked.push('user (framework)')
        return 'u_1'
      },
    }
    const kit = createAdapterKit<Req, undefined>(rules, { logger: false, ...hooks }, recording)
    const exchange = kit.enter({ path: '/', headers: { 'x-api-key': 'k_1' } }, undefined)!
    return { asked, exchange }
  }

  it('reads no API key and no user when no rule keys on them', () => {
    const { asked } = reading([PER_IP])
    expect(asked).not.toContain('x-api-key')
    expect(asked).not.toContain('user (framework)')
  })

  it('reads the API key for a rule keyed on it, and every identity for a limiter of the app', () => {
    expect(reading([PER_IP, PER_KEY]).asked).toContain('x-api-key')
    const own = reading(createLimiter({ rules: [PER_IP], logger: false })).asked
    expect(own).toContain('x-api-key')
    expect(own).toContain('user (framework)')
  })

  it("reads the user for a rule keyed on it: the app's hook, else the framework's", () => {
    expect(reading([PER_IP, PER_USER]).asked).toContain('user (framework)')
    const users: string[] = []
    const { asked, exchange } = reading([PER_USER], {
      user: (r: Req) => {
        users.push(r.path)
        return 'u_9'
      },
    })
    expect(users).toEqual(['/'])
    expect(asked).not.toContain('user (framework)')
    expect(exchange.verdict?.decisions[0]?.key).toBe('user#3:u_9&ip#11:203.0.113.7')
  })
})

describe('admitted fields with partition keys', () => {
  it('admits synchronously with a memory store, pk written with its fields, as a denial sends', () => {
    const clock = { now: () => 1_700_000_000_250 }
    const kit = createAdapterKit<Req, undefined>(
      [
        {
          id: 'per-ip',
          match: { identity: 'ip' },
          algorithm: 'fixed_window',
          limit: 3,
          window: '1s',
        },
      ],
      { logger: false, partitionKey: true, clock },
      framework,
    )
    const fieldsOf = () => {
      const exchange = kit.enter(req, undefined)!
      expect(exchange.ready).toBe(exchange)
      const written: HeaderEntries[] = []
      exchange.writeFields(collecting(), written)
      return Object.fromEntries(written[0]!)
    }
    const first = fieldsOf()
    expect(first['RateLimit']).toMatch(/^"per-ip";r=2;t=1;pk=:[A-Za-z0-9+/]{16}:$/)
    expect(fieldsOf()['RateLimit']).toBe(first['RateLimit']!.replace('r=2', 'r=1'))
    fieldsOf()
    // The denial's fields, built as entries, carry the same `pk`.
    const denied = kit.enter(req, undefined)!
    const fields = Object.fromEntries(denied.denialFields!)
    expect(fields['RateLimit']).toBe(first['RateLimit']!.replace('r=2', 'r=0'))
  })
})
