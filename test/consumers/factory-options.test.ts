// Every public factory that takes an options object refuses, at start-up, an option it does not
// know: from JavaScript a misspelt name (`maxKey`, `timeout`) would otherwise change nothing and
// say nothing. Checked for every known name of every factory, misspelt every way fast-check
// finds, and for the closest name offered.
import { createClient, localLimiter } from '@tollgate/client'
import { isRateLimitError, mapStore, memoryStore } from '@tollgate/core'
import { sseUsage, usageReader } from '@tollgate/core/usage'
import { shadowReportMetrics, tollgateMetrics } from '@tollgate/opentelemetry'
import { redisStore } from '@tollgate/redis'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'

const client = { evalsha: async () => [], eval: async () => [] }
const report = { rules: () => [], top: () => [] } as never

/** Each factory with the options it takes, and how to call it with one more. */
const FACTORIES: Record<string, { known: readonly string[]; call: (extra: object) => unknown }> = {
  'memoryStore()': { known: ['maxBytes', 'maxKeys', 'seed'], call: (extra) => memoryStore(extra) },
  'mapStore()': { known: ['maxKeys'], call: (extra) => mapStore(extra) },
  'redisStore()': {
    known: [
      'client',
      'prefix',
      'time',
      'timeoutMs',
      'expiryMarginMs',
      'coalesce',
      'leaseMs',
      'layout',
      'clock',
      'timers',
      'deadlines',
    ],
    call: (extra) => redisStore({ client, ...extra }),
  },
  'tollgateMetrics()': {
    known: ['meterProvider', 'histograms'],
    call: (extra) => tollgateMetrics(extra),
  },
  'shadowReportMetrics()': {
    known: ['meterProvider', 'ranks'],
    call: (extra) => shadowReportMetrics(report, extra),
  },
  'createClient()': {
    known: [
      'fetch',
      'limiter',
      'cost',
      'tokens',
      'retry',
      'learn',
      'partition',
      'maxJitterMs',
      'onEvent',
      'clock',
      'timers',
      'scheduler',
      'random',
    ],
    call: (extra) => createClient(extra),
  },
  'createClient() retry': {
    known: ['attempts', 'maxTotalMs', 'statuses', 'unsafeMethods', 'backoffBaseMs', 'maxBackoffMs'],
    call: (extra) => createClient({ retry: extra }),
  },
  'createClient() learn': {
    known: ['maxPolicies'],
    call: (extra) => createClient({ learn: extra }),
  },
  'sseUsage()': { known: ['maxEventLength'], call: (extra) => sseUsage(extra) },
  'usageReader()': {
    known: ['measure', 'maxEventLength'],
    call: (extra) => usageReader(extra),
  },
  'localLimiter()': {
    known: ['clock', 'timers', 'scheduler'],
    call: (extra) =>
      localLimiter({ algorithm: 'token_bucket', rate: 1, period: '1s', burst: 1 }, extra),
  },
}

/** A name one edit away from `name`: a letter dropped, doubled, swapped, or its case changed. */
const misspelt = (name: string) =>
  fc
    .tuple(fc.nat({ max: name.length - 1 }), fc.constantFrom('drop', 'double', 'swap', 'case'))
    .map(([at, edit]) => {
      const [head, letter, tail] = [name.slice(0, at), name[at]!, name.slice(at + 1)]
      if (edit === 'drop') return head + tail
      if (edit === 'double') return head + letter + letter + tail
      if (edit === 'swap' && tail.length > 0) return head + tail[0] + letter + tail.slice(1)
      const flipped = letter === letter.toLowerCase() ? letter.toUpperCase() : letter.toLowerCase()
      return head + flipped + tail
    })

/** What calling with `extra` threw, or undefined. */
function refusalOf(call: (extra: object) => unknown, extra: object): unknown {
  try {
    call(extra)
  } catch (error) {
    return error
  }
  return undefined
}

describe.each(Object.entries(FACTORIES))('%s', (where, { known, call }) => {
  it('takes its options as given', () => {
    expect(refusalOf(call, {})).toBeUndefined()
  })

  it('refuses every misspelt option at start-up, naming it and the closest known one', () => {
    const arbitrary = fc
      .constantFrom(...known)
      .chain((name) => fc.tuple(fc.constant(name), misspelt(name)))
      .filter(([, typo]) => typo.length > 0 && !known.includes(typo))
    fc.assert(
      fc.property(arbitrary, ([name, typo]) => {
        const error = refusalOf(call, { [typo]: 1 })
        expect(isRateLimitError(error)).toBe(true)
        const { code, field, message } = error as { code: string; field: string; message: string }
        expect([code, field]).toEqual(['ERR_RL_INVALID_OPTION', typo])
        expect(message).toContain(`${where}: unknown option "${typo}"`)
        // One edit away from the name meant, so that is the name offered (or one as close).
        expect(message).toMatch(/did you mean "([^"]+)"\?/)
        if (known.length === 1) expect(message).toContain(`did you mean "${name}"?`)
      }),
      { numRuns: 100 },
    )
  })
})
