/**
 * The client that learns from the fields, against Tollgate on Express, for every algorithm: it
 * must run near the rate the rule allows, never refused once it has learned the policy. "Near"
 * is against the ideal, the time the rule itself takes to admit every call when each is sent
 * the moment it would pass (its own algorithm run locally, greedy). One virtual clock for both
 * sides; the jitter source is pinned to its worst (the longest waits).
 */
import { createClient, localLimiter } from '@tollgate/client'
import { afterEach, describe, expect, it } from 'vitest'
import { idealMs, RATIO, ROUNDING_MS, type TimeRule } from './ideal.js'
import { ORIGINS, type Origin } from './servers.js'
import { virtualTime } from './virtual-time.js'

const CALLS = 500
/** A window boundary (epoch ms divisible by a second), and starts half-way and late in one. */
const STARTS = [1_700_000_000_000, 1_700_000_000_537, 1_700_000_000_999]
const WORST_JITTER = () => 1 - Number.EPSILON

const byIp = { identity: 'ip' } as const
/** 100 per second each; the rate rules with a burst of 10, below the quota. */
const RULES: readonly TimeRule[] = [
  { id: 'api', match: byIp, algorithm: 'token_bucket', rate: 100, period: '1s', burst: 10 },
  { id: 'api', match: byIp, algorithm: 'gcra', rate: 100, period: '1s', burst: 10 },
  { id: 'api', match: byIp, algorithm: 'leaky_bucket', rate: 100, period: '1s', burst: 10 },
  { id: 'api', match: byIp, algorithm: 'fixed_window', limit: 100, window: '1s' },
  { id: 'api', match: byIp, algorithm: 'sliding_window', limit: 100, window: '1s' },
  { id: 'api', match: byIp, algorithm: 'sliding_log', limit: 100, window: '1s' },
]

let origin: Origin | undefined
afterEach(async () => {
  await origin?.close()
  origin = undefined
})

const express = ORIGINS.find((factory) => factory.name === 'express')!

describe.each(RULES)('learning a $algorithm rule of Tollgate on Express', (rule) => {
  it.each(
    STARTS.flatMap((start) => [
      { start, limited: false },
      { start, limited: true },
    ]),
  )(
    'runs near the ideal time, never refused (from $start, local limiter: $limited)',
    async ({ start, limited }) => {
      const time = virtualTime(start)
      origin = await express.start([rule], time.clock)
      const statuses: number[] = []
      const client = createClient({
        ...time,
        random: WORST_JITTER,
        // As docs/client.md has it: learning on, alone or beside a limiter at the published limit.
        limiter: limited ? localLimiter(rule, time) : undefined,
        fetch: async (request) => {
          const response = await fetch(request)
          statuses.push(response.status)
          return response
        },
      })
      for (let i = 0; i < CALLS; i++) await client.fetch(`${origin.url}/v1/items`)
      const ideal = idealMs(rule, start, CALLS)
      const elapsed = time.clock.now() - start
      const ratio = elapsed / ideal
      expect(statuses.filter((status) => status !== 200)).toEqual([])
      if (start % 1000 === 0) expect(ratio).toBeLessThanOrEqual(RATIO)
      else expect(elapsed).toBeLessThanOrEqual(RATIO * ideal + ROUNDING_MS)
      console.info(
        `${rule.algorithm} from ${start % 1000} ms, limiter ${limited}: ${ratio.toFixed(3)} × ideal`,
      )
    },
    60_000,
  )
})
