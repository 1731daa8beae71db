import { describe, expect, it } from 'vitest'
import type { RuleConfig } from '../rules/types.js'
import type { Store } from '../store/types.js'
import { createLimiter } from './create-limiter.js'
import type { LimiterOptions, Verdict } from './types.js'

const RULE: RuleConfig = {
  id: 'per-ip',
  match: { identity: 'ip' },
  algorithm: 'token_bucket',
  rate: 1,
  burst: 1,
}

/** A store that counts its calls and answers none: a listed request must never reach it. */
function countingStore() {
  const calls: string[] = []
  const store: Store = {
    consume: () => {
      calls.push('consume')
      throw new Error('not expected')
    },
    refund: () => {
      calls.push('refund')
    },
  }
  return { store, calls }
}

const request = (identities: Record<string, string>) => ({ method: 'GET', path: '/', identities })

describe('allow and deny lists', () => {
  it('lets allowed clients through and refuses denied ones before any store call', () => {
    const { store, calls } = countingStore()
    const limiter = createLimiter({
      rules: [RULE],
      store,
      customIdentities: ['account'],
      allowList: { ip: ['10.0.0.0/8', '2001:db8::/32'], api_key: 'k_internal' },
      denyList: { ip: '10.6.6.6', account: ['banned'] },
    })
    const at = (identities: Record<string, string>) => {
      const v = limiter.decide(request(identities), { now: 0 }) as Verdict
      return [v.allowed, v.reason, v.decisions.length]
    }
    expect(at({ ip: '10.1.2.3' })).toEqual([true, undefined, 0])
    // IPv6 clients are keyed by network (2001:db8:1:2::/64): the network's address is matched.
    expect(at({ ip: '2001:db8:1:2::/64' })).toEqual([true, undefined, 0])
    expect(at({ ip: '203.0.113.9', api_key: 'k_internal' })).toEqual([true, undefined, 0])
    // The deny list wins over the allow list.
    expect(at({ ip: '10.6.6.6' })).toEqual([false, 'deny-list', 0])
    expect(at({ ip: '203.0.113.9', account: 'banned' })).toEqual([false, 'deny-list', 0])
    expect(calls).toEqual([])
    // Anyone else goes to the store.
    expect(() => at({ ip: '203.0.113.9' })).not.toThrow()
    expect(calls).toEqual(['consume'])
  })

  const refusals: ReadonlyArray<readonly [string, Partial<LimiterOptions>, string, string]> = [
    [
      'not an object',
      { allowList: ['10.0.0.0/8'] as never },
      'allowList',
      'expected identity name → values',
    ],
    [
      'a misspelt identity',
      { denyList: { api_kye: 'k' } },
      'denyList.api_kye',
      'did you mean "api_key"?',
    ],
    [
      'an undeclared identity',
      { denyList: { account: 'a' } },
      'denyList.account',
      'declare it: customIdentities',
    ],
    ['an empty value', { allowList: { user: ['u1', ''] } }, 'allowList.user', 'non-empty strings'],
    [
      'a value that is no string',
      { allowList: { user: [7] as never } },
      'allowList.user',
      'got [7]',
    ],
    [
      'an address that is none',
      { denyList: { ip: ['10.0.0.0/33'] } },
      'denyList.ip',
      '"10.0.0.0/33" is not an IP address',
    ],
  ]
  it.each(refusals)(
    'refuses %s at start-up, naming the field',
    (_what, options, field, message) => {
      expect(() => createLimiter({ rules: [RULE], ...options })).toThrow(
        expect.objectContaining({
          code: 'ERR_RL_INVALID_OPTION',
          field,
          message: expect.stringContaining(message),
        }),
      )
    },
  )
})
