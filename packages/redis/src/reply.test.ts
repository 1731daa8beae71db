import { concurrency, leakyQueue, tokenBucket } from '@tollgate/core'
import type { Charge } from '@tollgate/core/store'
import { describe, expect, it } from 'vitest'
import { parseRenewReply, parseReply, parseRuleSetReplies } from './reply.js'

const charge: Charge = {
  rule: 'r',
  algorithm: tokenBucket({ rate: 1, burst: 20 }),
  key: 'k',
  cost: 1,
  shadow: false,
}

describe('parseReply', () => {
  it('reads decisions, filling in the limit', () => {
    expect(parseReply([5, 0, 0, 1000, 1000], [charge])).toEqual({
      at: 5,
      committed: false,
      decisions: [
        { allowed: false, remaining: 0, limit: 20, resetAfterMs: 1000, retryAfterMs: 1000 },
      ],
      deniedOnCommit: [false],
    })
    expect(parseReply([5, 1, 19, 1000], [charge]).decisions[0]).toEqual({
      allowed: true,
      remaining: 19,
      limit: 20,
      resetAfterMs: 1000,
      retryAfterMs: undefined,
    })
  })

  it('reports a request committed unless an enforcing charge was denied in the dry run', () => {
    const shadow = { ...charge, shadow: true }
    expect(parseReply([5, 1, 19, 1000], [charge]).committed).toBe(true)
    expect(parseReply([5, 1, 19, 1000], [charge], true).committed).toBe(false)
    expect(parseReply([5, 0, 0, 1000, 1000], [shadow]).committed).toBe(true)
    const twice = parseReply([5, 1, 0, 1000, 2, 0, 1000, 1000], [charge, charge])
    expect(twice).toMatchObject({ committed: true, deniedOnCommit: [false, true] })
    expect(twice.decisions[1]).toMatchObject({ allowed: false, retryAfterMs: 1000 })
  })

  it("reads an allowed queue charge's delayMs where a denied charge's retry time goes", () => {
    const queued: Charge = { ...charge, algorithm: leakyQueue({ rate: 10, burst: 20 }) }
    const reply = parseReply([5, 1, 18, 300, 0, 18, 300, 200, 100], [queued, queued])
    expect(reply.decisions.map((d) => [d.allowed, d.retryAfterMs, d.delayMs])).toEqual([
      [true, undefined, 200],
      [false, 100, undefined],
    ])
    // -1: a cost-0 report, which carries no delay at all.
    expect(parseReply([5, 1, 21, 0, -1], [queued]).decisions[0]).not.toHaveProperty('delayMs')
    expect(() => parseReply([5, 1, 18, 300], [queued])).toThrow(
      expect.objectContaining({ code: 'ERR_RL_STORE_REPLY' }),
    )
    const [outcome] = parseRuleSetReplies(
      [0, 18, 300, 200],
      [{ charges: [queued], now: 9 }],
      1,
      false,
    )
    expect(outcome!.decisions[0]).toMatchObject({
      allowed: true,
      delayMs: 200,
      retryAfterMs: undefined,
    })
    const [report] = parseRuleSetReplies([0, 21, 0, -1], [{ charges: [queued], now: 9 }], 1, false)
    expect(report!.decisions[0]).not.toHaveProperty('delayMs')
  })

  it('reads the units a concurrency load swept, sent last and only when there were some', () => {
    const slots: Charge = { ...charge, rule: 's', algorithm: concurrency({ limit: 3 }) }
    expect(parseReply([5, 1, 2, 0], [slots])).not.toHaveProperty('swept')
    expect(parseReply([5, 1, 2, 0, 2], [slots]).swept).toEqual([2])
    expect(parseReply([5, 1, 19, 1000, 1, 2, 0, 0, 3], [charge, slots]).swept).toEqual([0, 3])
    // After the recorded times of a slot group's consume.
    const grouped = parseReply([5, 1, 2, 0, 5, 1], [slots], false, true)
    expect(grouped).toMatchObject({ recordedAt: [5], swept: [1] })
    for (const bad of [
      [5, 1, 2, 0, 0],
      [5, 1, 2, 0, -1],
      [5, 1, 2, 0, 1, 1],
    ]) {
      expect(() => parseReply(bad, [slots])).toThrow(
        expect.objectContaining({ code: 'ERR_RL_STORE_REPLY' }),
      )
    }
    // Units swept at a charge that keeps no leases: not a reply of ours.
    expect(() => parseReply([5, 1, 19, 1000, 1, 2, 0, 3, 0], [charge, slots])).toThrow(
      expect.objectContaining({ code: 'ERR_RL_STORE_REPLY' }),
    )
  })

  it.each([
    ['not an array', 'OK'],
    ['too short', [5, 1, 19]],
    ['missing the retry time of a denied charge', [5, 0, 0, 1000]],
    ['carrying a retry time for an allowed charge', [5, 1, 19, 1000, 0]],
    ['a string inside', [5, 1, '19', 1000]],
    ['a fraction', [5, 1, 19.5, 1000]],
    ['an unknown verdict', [5, 3, 19, 1000]],
  ])('refuses a reply that is %s with ERR_RL_STORE_REPLY', (_what, reply) => {
    expect(() => parseReply(reply, [charge])).toThrow(
      expect.objectContaining({ code: 'ERR_RL_STORE_REPLY' }),
    )
  })

  it("reads a rule-set reply: what is left (signed by the verdict), the reset, then a denied charge's retry time", () => {
    const requests = [
      { charges: [charge, charge], now: 7 },
      { charges: [charge, charge], now: 8 },
    ]
    const outcomes = parseRuleSetReplies(
      [5, 19, 50, -1, 1000, 200, 3, 40, 4, 50],
      requests,
      2,
      true,
    )
    expect(
      outcomes.map((o) =>
        o.decisions.map((d) => [d.allowed, d.remaining, d.resetAfterMs, d.retryAfterMs]),
      ),
    ).toEqual([
      [
        [true, 19, 50, undefined],
        [false, 0, 1000, 200],
      ],
      [
        [true, 3, 40, undefined],
        [true, 4, 50, undefined],
      ],
    ])
    expect(outcomes.map((o) => o.at)).toEqual([5, 5])
    for (const bad of [
      [5, 19, 50, -1, 1000],
      [5, 19, 50, -1, 1000, 200, 3, 40, 4, 50, 0],
      [5, 19, 50, -1, 1000, 200, 3, 40, 4],
    ]) {
      expect(() => parseRuleSetReplies(bad, requests, 2, true)).toThrow(
        expect.objectContaining({ code: 'ERR_RL_STORE_REPLY' }),
      )
    }
  })
})

describe('parseRenewReply', () => {
  it('reads per lease its units held and those the renewal found ended', () => {
    expect(parseRenewReply([2, 0, 0, 3], 2)).toEqual([
      { held: 2, ended: 0 },
      { held: 0, ended: 3 },
    ])
    for (const bad of [[2], [2, 0, 1], [2, -1], [2, 0.5], 'OK']) {
      expect(() => parseRenewReply(bad, 1)).toThrow(
        expect.objectContaining({ code: 'ERR_RL_STORE_REPLY' }),
      )
    }
  })
})
