// How a limiter finds the rule of a verdict's decision: its own rules, then those an update
// retired; a limiter an app holds refuses an id it holds no rule for (ERR_RL_UNKNOWN_RULE,
// naming its rules), a middleware's own, handed only the verdicts it made, needs no such check.
import { describe, expect, it } from 'vitest'
import type { Shared } from '../adapter/exchange.js'
import { composeAdapterKit } from '../adapter/kit.js'
import { tokenBucket } from '../algorithms/index.js'
import { isRateLimitError } from '../errors.js'
import type { RuleConfig } from '../rules/types.js'
import { memoryStore } from '../store/memory-store.js'
import { createLimiter } from './create-limiter.js'
import type { Limiter, Verdict } from './types.js'
import { rulesUpdater } from './update.js'

const rule = (id: string, burst = 2): RuleConfig => ({
  id,
  match: { identity: 'ip' },
  algorithm: 'token_bucket',
  rate: 1,
  period: '1h',
  burst,
})
const REQUEST = { method: 'GET', path: '/', identities: { ip: '192.0.2.1' } }
const NOW = 1_800_000_000_000
const FRAMEWORK = {
  method: () => 'GET',
  path: () => '/',
  socketAddress: () => '192.0.2.1',
  header: () => undefined,
  user: () => undefined,
}

function codeOf(run: () => unknown) {
  try {
    run()
  } catch (error) {
    return isRateLimitError(error) ? [error.code, error.rule, error.message] : [String(error)]
  }
  return ['no error']
}

describe('a limiter an app holds', () => {
  it("refuses a verdict of another limiter's rule, naming its own", () => {
    const other = createLimiter({ rules: [rule('theirs')] })
    const limiter = createLimiter({ rules: [rule('a'), rule('b')] })
    const verdict = other.decide(REQUEST, { now: NOW }) as Verdict
    expect(codeOf(() => limiter.refund(verdict, { now: NOW }))).toEqual([
      'ERR_RL_UNKNOWN_RULE',
      'theirs',
      '[tollgate] no rule "theirs" (rules: a, b)',
    ])
  })

  it('refunds a verdict of a rule an update retired', async () => {
    const limiter = createLimiter({ rules: [rule('a')], store: memoryStore() })
    const verdict = limiter.decide(REQUEST, { now: NOW }) as Verdict
    await limiter.update!([rule('b')])
    expect(codeOf(() => limiter.refund(verdict, { now: NOW }))).toEqual(['no error'])
    await limiter.update!([rule('a')])
    expect(limiter.decide(REQUEST, { now: NOW })).toMatchObject({
      allowed: true,
      decisions: [{ rule: 'a', remaining: 1 }],
    })
  })
})

describe("a middleware's own limiter", () => {
  const limiterOf = (parts: { update?: typeof rulesUpdater }): Limiter =>
    (
      composeAdapterKit({ algorithms: { token_bucket: tokenBucket }, ...parts })(
        [rule('a')],
        { store: memoryStore() },
        FRAMEWORK,
      ) as unknown as Shared<unknown>
    ).limiter

  it('refunds its verdicts, a retired rule’s too', async () => {
    const limiter = limiterOf({ update: rulesUpdater })
    const first = limiter.decide(REQUEST, { now: NOW }) as Verdict
    expect(first.decisions).toMatchObject([{ rule: 'a', remaining: 1 }])
    await limiter.refund(first, { now: NOW })
    const second = limiter.decide(REQUEST, { now: NOW }) as Verdict
    expect(second.decisions).toMatchObject([{ rule: 'a', remaining: 1 }])
    await limiter.update!([rule('b')])
    expect(codeOf(() => limiter.refund(second, { now: NOW }))).toEqual(['no error'])
    await limiter.update!([rule('a')])
    expect(limiter.decide(REQUEST, { now: NOW })).toMatchObject({
      decisions: [{ rule: 'a', remaining: 1 }],
    })
  })
})
