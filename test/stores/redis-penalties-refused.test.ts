// The Redis store keeps no penalties and answers no operator's call yet (issue 47's first part
// is the memory store's): a limiter with penalised rules on it is refused at start-up, and the
// operator's calls are refused by name. No server is needed: nothing reaches one.
import { createLimiter, limiterOperations, type RuleConfig } from '@tollgate/core'
import { redisStore } from '@tollgate/redis'
import { describe, expect, it } from 'vitest'

const noCall = async (): Promise<never> => {
  throw new Error('no call expected')
}
const client = { evalsha: noCall, eval: noCall }
const LOGIN: RuleConfig = {
  id: 'login',
  match: { identity: 'ip' },
  algorithm: 'sliding_log',
  limit: 5,
  window: '1m',
}

describe('the Redis store, without penalties or operator calls', () => {
  it('refuses a limiter with a penalised rule at start-up, naming the rule and the store', () => {
    expect(() =>
      createLimiter({
        rules: [{ ...LOGIN, penalty: { block: '1m' } }],
        store: redisStore({ client }),
      }),
    ).toThrow(
      expect.objectContaining({
        code: 'ERR_RL_INVALID_OPTION',
        field: 'store',
        message: expect.stringContaining('rules "login" penalise repeated denials (penalty)'),
      }),
    )
  })

  it('refuses the operator’s peek, reset, block and unblock by name', () => {
    const ops = limiterOperations(createLimiter({ rules: [LOGIN], store: redisStore({ client }) }))
    for (const [name, call] of [
      ['peek', () => ops.peek('ip:1', 'login')],
      ['reset', () => ops.reset('ip:1', 'login')],
      ['block', () => ops.block('ip:1', 'login', '1m')],
      ['unblock', () => ops.unblock('ip:1', 'login')],
    ] as const) {
      expect(call, name).toThrow(
        expect.objectContaining({
          code: 'ERR_RL_STORE_UNSUPPORTED',
          message: expect.stringContaining(`the store has no ${name} method`),
        }),
      )
    }
  })
})
