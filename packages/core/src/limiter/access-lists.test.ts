import { describe, expect, it } from 'vitest'
import type { RuleConfig } from '../rules/types.js'
import type { Store } from '../store/types.js'
import { accessLists } from './access-lists.js'
import { createLimiter } from './create-limiter.js'
import type { Verdict } from './types.js'

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
      logger: false,
      lists: accessLists({
        allow: { ip: ['10.0.0.0/8', '2001:db8::/32'], api_key: 'k_internal' },
        deny: { ip: '10.6.6.6', account: ['banned'] },
      }),
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

  const refusals: ReadonlyArray<readonly [string, () => unknown, string, string]> = [
    [
      'not an object',
      () => accessLists({ allow: ['10.0.0.0/8'] as never }),
      'allow',
      'expected identity name → values',
    ],
    [
      'a list neither allow nor deny',
      () => accessLists({ block: {} } as never),
      'block',
      'unknown list',
    ],
    [
      'a misspelt identity',
      () => limit({ deny: { api_kye: 'k' } }),
      'lists.deny.api_kye',
      'did you mean "api_key"?',
    ],
    [
      'an undeclared identity',
      () => limit({ deny: { account: 'a' } }),
      'lists.deny.account',
      'or add it to customIdentities',
    ],
    [
      'an empty value',
      () => accessLists({ allow: { user: ['u1', ''] } }),
      'allow.user',
      'non-empty strings',
    ],
    [
      'a value that is no string',
      () => accessLists({ allow: { user: [7] as never } }),
      'allow.user',
      'got [7]',
    ],
    [
      'an address that is none',
      () => accessLists({ deny: { ip: ['10.0.0.0/33'] } }),
      'deny.ip',
      '"10.0.0.0/33" is not an IP address',
    ],
    [
      'lists not made by accessLists',
      () => createLimiter({ rules: [RULE], lists: { deny: {} } as never }),
      'lists',
      'expected accessLists()',
    ],
  ]
  it.each(refusals)('refuses %s at start-up, naming the field', (_what, make, field, message) => {
    expect(make).toThrow(
      expect.objectContaining({
        code: 'ERR_RL_INVALID_OPTION',
        field,
        message: expect.stringContaining(message),
      }),
    )
  })
})

function limit(lists: Parameters<typeof accessLists>[0]) {
  return createLimiter({ rules: [RULE], lists: accessLists(lists) })
}
