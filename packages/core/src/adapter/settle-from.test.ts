import { describe, expect, it } from 'vitest'
import type { RuleConfig } from '../rules/types.js'
import { usageReader } from '../usage/usage-reader.js'
import { createAdapterKit, type Exchange, type Framework, type KitOptions } from './kit.js'
import { settleFrom } from './settle-from.js'

type Req = { readonly estimate?: number }

const framework: Framework<Req> = {
  method: () => 'POST',
  path: () => '/v1/chat/completions',
  socketAddress: () => '203.0.113.7',
  header: () => undefined,
  user: () => undefined,
}

const RULES: RuleConfig[] = [
  {
    id: 'tokens',
    match: { identity: 'ip' },
    algorithm: 'fixed_window',
    limit: 10_000,
    window: '1m',
    cost: 1000,
    settle: true,
  },
  { id: 'requests', match: { identity: 'ip' }, algorithm: 'fixed_window', limit: 60, window: '1m' },
]

function kitWith(options: KitOptions<Req, undefined>, rules = RULES) {
  const warnings: string[] = []
  const kit = createAdapterKit<Req, undefined>(
    rules,
    { clock: { now: () => 0 }, logger: { warn: (w) => warnings.push(w) }, ...options },
    framework,
  )
  /** Sends one request; its meter reads `body` (pieces) with the `type` given. */
  const send = (req: Req, status: number, type: string, body: readonly (string | Uint8Array)[]) => {
    const exchange = kit.enter(req, undefined) as Exchange<Req, undefined>
    const meter = kit.meter!(exchange)!
    meter.head(status, (name) => (name === 'content-type' ? type : undefined))
    for (const piece of body) meter.write(piece)
    void meter.end(status)
    return exchange.verdict!
  }
  /** Tokens left, as the next request (reserving nothing) sees them. */
  const left = () =>
    (kit.enter({ estimate: 0 }, undefined) as Exchange<Req, undefined>).verdict!.decisions[0]!
      .remaining
  return { kit, send, left, warnings }
}

const estimate = (req: Req) => req.estimate
const usage = (total: number) =>
  JSON.stringify({ usage: { prompt_tokens: 1, completion_tokens: total - 1, total_tokens: total } })

describe('settleFrom: refused at start-up', () => {
  const refusal = (options: KitOptions<Req, undefined>, rules = RULES) => {
    try {
      kitWith(options, rules)
    } catch (error) {
      return (error as Error).message
    }
    return 'not refused'
  }

  it('names a misspelt rule with the closest id', () => {
    expect(refusal({ settle: settleFrom({ tokns: usageReader() }) })).toBe(
      '[tollgate] settle.tokns: no rule "tokns": did you mean "tokens"?',
    )
  })

  it('names a rule without settle, whose charge is final', () => {
    expect(refusal({ settle: settleFrom({ requests: usageReader() }) })).toMatch(
      /^\[tollgate\] settle\.requests: rule "requests" has no settle field/,
    )
  })

  it('refuses settle and estimate when no rule settles', () => {
    const plain = RULES.slice(1)
    expect(refusal({ settle: settleFrom(usageReader()) }, plain)).toMatch(
      /settle: no rule has a settle field/,
    )
    expect(refusal({ estimate }, plain)).toMatch(/estimate: no rule has a settle field/)
  })

  it('refuses a settle option settleFrom did not make, and bad sources and options', () => {
    expect(refusal({ settle: usageReader() as never })).toMatch(/settle: expected settleFrom/)
    expect(refusal({ settle: (() => 1) as never })).toMatch(/settle: expected settleFrom/)
    expect(refusal({ estimate: 3 as never })).toMatch(/estimate: expected a function/)
    expect(() => settleFrom({ tokens: 5 as never })).toThrow(
      /settleFrom\(\) settle\.tokens: expected usageReader\(\) or a function/,
    )
    expect(() => settleFrom(usageReader(), { maxBodyByte: 1 } as never)).toThrow(
      /did you mean "maxBodyBytes"/,
    )
    expect(() => settleFrom(usageReader(), { maxBodyBytes: -1 })).toThrow(/maxBodyBytes/)
  })
})

describe('settleFrom: reading a response', () => {
  it('settles the usage of a JSON answer, fed in pieces cut within a character', () => {
    const { send, left } = kitWith({ estimate, settle: settleFrom(usageReader()) })
    const body = new TextEncoder().encode(`{"content":"é😀",${usage(300).slice(1)}`)
    const verdict = send({ estimate: 2000 }, 200, 'application/json', [
      body.slice(0, 13),
      body.slice(13, 15),
      body.slice(15),
    ])
    expect(verdict.decisions[0]!.remaining).toBe(8000)
    expect(left()).toBe(9700)
  })

  it('holds at most maxBodyBytes of a JSON answer: over it, the estimate stands, with a warning', () => {
    const { send, left, warnings } = kitWith({
      estimate,
      settle: settleFrom(usageReader(), { maxBodyBytes: 20 }),
    })
    send({ estimate: 2000 }, 200, 'application/json', [usage(300)])
    expect(left()).toBe(8000)
    expect(warnings).toEqual([
      expect.stringMatching(/WARN_SETTLE_NO_COST: .*larger than maxBodyBytes, 20/),
    ])
  })

  it('settles costs by rule from their own sources', () => {
    const rules: RuleConfig[] = [
      RULES[0]!,
      { ...RULES[0]!, id: 'bytes', limit: 1_000_000, cost: 5000 } as RuleConfig,
    ]
    const { send, kit } = kitWith(
      { settle: settleFrom({ tokens: usageReader(), bytes: (response) => response.bytes }) },
      rules,
    )
    send({}, 200, 'application/json', [usage(300)])
    const next = (kit.enter({}, undefined) as Exchange<Req, undefined>).verdict!
    const size = usage(300).length
    expect(next.decisions.map((d) => d.remaining)).toEqual([
      10_000 - 300 - 1000,
      1_000_000 - size - 5000,
    ])
  })

  it('cancels an error answer without usage; cancelIf decides otherwise', () => {
    const { send, left } = kitWith({ estimate, settle: settleFrom(usageReader()) })
    send({}, 503, 'application/json', ['{"error":{}}'])
    expect(left()).toBe(10_000)
    const kept = kitWith({
      estimate,
      settle: settleFrom(usageReader(), { cancelIf: () => false }),
    })
    kept.send({}, 503, 'application/json', ['{"error":{}}'])
    expect(kept.left()).toBe(9000)
  })

  it('leaves the estimate for a cost the limiter refuses, with a warning, never a throw', () => {
    const { send, left, warnings } = kitWith({ estimate, settle: settleFrom(() => 1.5) })
    expect(() => send({}, 200, 'text/plain', ['ok'])).not.toThrow()
    expect(left()).toBe(9000)
    expect(warnings).toEqual([expect.stringMatching(/WARN_SETTLE_READ_FAILED: .*refused/)])
  })

  it('gives no meter for a denial', () => {
    const { kit } = kitWith({ settle: settleFrom(usageReader()) }, [
      { ...RULES[0]!, limit: 1000 } as RuleConfig,
    ])
    kit.enter({}, undefined)
    const denied = kit.enter({}, undefined) as Exchange<Req, undefined>
    expect(denied.denial).toBeDefined()
    expect(kit.meter!(denied)).toBeUndefined()
  })
})
