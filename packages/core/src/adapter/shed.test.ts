import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { isRateLimitError } from '../errors.js'
import type { RuleConfig } from '../rules/types.js'
import { createAdapterKit, type Exchange, type Framework, type KitOptions } from './kit.js'
import { loadShedder, type ShedEvent, type ShedOptions } from './shed.js'

type Req = { readonly path: string }

const framework: Framework<Req> = {
  method: () => 'GET',
  path: (req) => req.path,
  socketAddress: () => '203.0.113.7',
  header: () => undefined,
  user: () => undefined,
}

const RULES: RuleConfig[] = [
  { id: 'per-ip', match: { identity: 'ip' }, algorithm: 'token_bucket', rate: 1000, burst: 1000 },
]

/** A kit whose clock and event-loop delay the test moves. */
function shedding(shed: ShedOptions<Req>, rules = RULES) {
  const time = { now: 1_000_000, delay: 0 }
  const events: ShedEvent[] = []
  const options: KitOptions<Req, undefined> = {
    logger: false,
    clock: { now: () => time.now },
    shed: loadShedder({
      eventLoopDelay: () => time.delay,
      onShed: (event) => events.push(event),
      ...shed,
    }),
  }
  const kit = createAdapterKit(rules, options, framework)
  const enter = (path = '/') => kit.enter({ path }, undefined) as Exchange<Req, undefined>
  return { kit, time, events, enter }
}

describe('load shedding', () => {
  it('sheds on event-loop delay with a 503, Retry-After and temporary-reduced-capacity', () => {
    const { time, enter, events } = shedding({ maxEventLoopDelayMs: 100, retryAfterMs: 2000 })
    expect(enter().denial).toBeUndefined()
    time.delay = 150
    time.now += 500
    const shed = enter().denial!
    expect(shed.status).toBe(503)
    expect(shed.headers).toEqual([
      ['Retry-After', '2'],
      ['Content-Type', 'application/problem+json'],
    ])
    expect(JSON.parse(shed.body)).toMatchObject({
      type: 'https://iana.org/assignments/http-problem-types#temporary-reduced-capacity',
      status: 503,
      retryAfter: 2,
    })
    expect(events).toEqual([{ reason: 'event-loop-delay', critical: false, shadow: false }])
  })

  it('turns on above the delay and off only under (1 − hysteresis) of it, reading it once per sample', () => {
    const step = fc.record({
      delay: fc.integer({ min: 0, max: 200 }),
      advance: fc.integer({ min: 0, max: 300 }),
    })
    fc.assert(
      fc.property(fc.array(step, { maxLength: 40 }), (steps) => {
        const { time, enter } = shedding({
          maxEventLoopDelayMs: 100,
          hysteresis: 0.25,
          sampleEveryMs: 100,
        })
        let on = false
        let sampledAt = Number.NEGATIVE_INFINITY
        for (const { delay, advance } of steps) {
          time.now += advance
          time.delay = delay
          if (time.now - sampledAt >= 100) {
            sampledAt = time.now
            on = on ? delay > 75 : delay > 100
          }
          expect(enter().denial?.status).toBe(on ? 503 : undefined)
        }
      }),
    )
  })

  it('keeps serving critical routes while the rest is shed', () => {
    const { time, enter, events } = shedding({ maxEventLoopDelayMs: 100, critical: ['/pay/*'] })
    time.delay = 500
    expect(enter('/pay/now').denial).toBeUndefined()
    expect(enter('/report').denial?.status).toBe(503)
    expect(events.map((event) => event.critical)).toEqual([false])
  })

  it('keeps the last share of maxInFlight for critical requests, and counts requests until they end', () => {
    const { enter } = shedding({ maxInFlight: 10, criticalShare: 0.2, critical: ['/pay'] })
    const flying = Array.from({ length: 8 }, () => enter('/report'))
    expect(flying.every((exchange) => exchange.denial === undefined)).toBe(true)
    expect(enter('/report').denial?.status).toBe(503)
    const critical = [enter('/pay'), enter('/pay')]
    expect(critical.every((exchange) => exchange.denial === undefined)).toBe(true)
    expect(enter('/pay').denial?.status).toBe(503)
    flying[0]!.end(200)
    flying[0]!.end(200)
    expect(enter('/pay').denial).toBeUndefined()
    flying[1]!.abort()
    flying[1]!.end(200)
    expect(enter('/report').denial?.status).toBe(503)
    critical[0]!.end(200)
    critical[1]!.end(200)
    expect(enter('/report').denial).toBeUndefined()
  })

  it('does not count a request the rules refuse', () => {
    const rules: RuleConfig[] = [
      {
        id: 'one',
        match: { identity: 'ip' },
        algorithm: 'token_bucket',
        rate: 1,
        period: '1h',
        burst: 1,
      },
    ]
    const { enter } = shedding({ maxInFlight: 2, criticalShare: 0 }, rules)
    expect(enter().denial).toBeUndefined()
    for (let i = 0; i < 5; i++) expect(enter().denial?.status).toBe(429)
    expect(enter().denial?.status).toBe(429)
  })

  it('counts in flight exactly the requests it let through that are not over yet, each over once', () => {
    // One request per client: a fresh address is admitted, one seen before is refused (429).
    const rules: RuleConfig[] = [
      {
        id: 'one',
        match: { identity: 'ip' },
        algorithm: 'token_bucket',
        rate: 1,
        period: '1h',
        burst: 1,
      },
    ]
    const step = fc.oneof(
      fc.record({ enter: fc.boolean() }),
      fc.record({ over: fc.nat(), how: fc.constantFrom('end', 'abort') }),
    )
    fc.assert(
      fc.property(fc.array(step, { maxLength: 60 }), (steps) => {
        let client = 0
        const kit = createAdapterKit(
          rules,
          { logger: false, shed: loadShedder({ maxInFlight: 3, criticalShare: 0 }) },
          { ...framework, socketAddress: (req) => req.path },
        )
        // The model: the clients the rules have seen, the admissions not over yet; shed when 3 are.
        const seen = new Set<string>()
        const admitted: Exchange<Req, unknown>[] = []
        let inFlight = 0
        for (const s of steps) {
          if ('enter' in s) {
            const address = `203.0.113.${s.enter || client === 0 ? ++client : client}`
            const exchange = kit.enter({ path: address }, undefined)!
            if (inFlight >= 3) {
              expect(exchange.denial?.status).toBe(503)
              continue
            }
            const fresh = !seen.has(address)
            seen.add(address)
            expect(exchange.denial?.status).toBe(fresh ? undefined : 429)
            if (fresh) {
              admitted.push(exchange)
              inFlight++
            }
          } else if (admitted.length > 0) {
            const exchange = admitted[s.over % admitted.length]!
            const over = (exchange as unknown as { over: boolean }).over
            if (s.how === 'end') exchange.end(200)
            else exchange.abort()
            if (!over) inFlight--
          }
        }
      }),
    )
  })

  it('sheds while the health probe fails; in shadow mode only reports', () => {
    let healthy = false
    const { time, enter, events } = shedding({ healthy: () => healthy, mode: 'shadow' })
    expect(enter().denial).toBeUndefined()
    expect(events).toEqual([{ reason: 'unhealthy', critical: false, shadow: true }])
    healthy = true
    time.now += 500
    expect(enter().denial).toBeUndefined()
    expect(events).toHaveLength(1)
    const enforcing = shedding({ healthy: () => false })
    expect(enforcing.enter().denial?.status).toBe(503)
  })

  it('refuses bad options at start-up, naming the option', () => {
    const refused = (shed: unknown, fw: Framework<Req> = framework) => {
      try {
        createAdapterKit(RULES, { logger: false, shed: loadShedder(shed as never) }, fw)
      } catch (error) {
        expect(isRateLimitError(error)).toBe(true)
        return (error as Error).message
      }
      throw new Error('accepted')
    }
    expect(refused({ maxInFlight: 0 })).toMatch('shed.maxInFlight: expected a whole number ≥ 1')
    expect(refused({ maxInflight: 5 })).toMatch('shed.maxInflight: unknown option')
    expect(refused({ healthy: () => true, hysteresis: 1 })).toMatch('shed.hysteresis')
    expect(refused({ healthy: () => true, critical: ['GET'] })).toMatch('shed.critical')
    expect(refused({})).toMatch('give at least one of')
    // An edge runtime has no event-loop delay of its own.
    expect(() =>
      createAdapterKit(RULES, { logger: false, shed: { maxInFlight: 1 } as never }, framework),
    ).toThrow('shed: expected loadShedder')
    expect(refused({ maxEventLoopDelayMs: 100 })).toMatch(
      'shed.eventLoopDelay: this runtime has no event-loop delay',
    )
    expect(() =>
      createAdapterKit(
        RULES,
        { logger: false, shed: loadShedder({ maxEventLoopDelayMs: 100 }) },
        {
          ...framework,
          eventLoopDelay: () => () => 0,
        },
      ),
    ).not.toThrow()
  })
})
