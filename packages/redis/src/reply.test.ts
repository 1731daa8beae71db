import { type Charge, tokenBucket } from '@tollgate/core'
import { describe, expect, it } from 'vitest'
import { parseReply } from './reply.js'

const charge: Charge = {
  rule: 'r',
  algorithm: tokenBucket({ rate: 1, burst: 20 }),
  key: 'k',
  cost: 1,
  shadow: false,
}

describe('parseReply', () => {
  it('reads decisions, filling in the limit', () => {
    expect(parseReply([5, 0, 0, 0, 1000, 1000], [charge])).toEqual({
      at: 5,
      committed: false,
      decisions: [
        { allowed: false, remaining: 0, limit: 20, resetAfterMs: 1000, retryAfterMs: 1000 },
      ],
      deniedOnCommit: [false],
    })
    expect(parseReply([5, 1, 1, 19, 1000, 0], [charge]).decisions[0]).toEqual({
      allowed: true,
      remaining: 19,
      limit: 20,
      resetAfterMs: 1000,
      retryAfterMs: undefined,
    })
  })

  it.each([
    ['not an array', 'OK'],
    ['too short', [5, 1, 1, 19]],
    ['a string inside', [5, 1, 1, '19', 1000, 0]],
    ['a fraction', [5, 1, 1, 19.5, 1000, 0]],
    ['an unknown verdict', [5, 1, 3, 19, 1000, 0]],
  ])('refuses a reply that is %s with ERR_RL_STORE_REPLY', (_what, reply) => {
    expect(() => parseReply(reply, [charge])).toThrow(
      expect.objectContaining({ code: 'ERR_RL_STORE_REPLY' }),
    )
  })
})
