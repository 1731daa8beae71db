// `mergeGroups` against the one before it was made smaller (old-merge/merge-groups.test-copy.ts),
// over generated fields: the same writes, and the same fields read from the response, in order.
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { DRAFT_6_GROUP, DRAFT_7_GROUP, mergeGroups, X_RATE_LIMIT_GROUP } from './field-merge.js'
import { mergeGroups as oldMergeGroups } from './old-merge/merge-groups.test-copy.js'

const NAMES = [
  'X-RateLimit-Limit',
  'X-RateLimit-Remaining',
  'X-RateLimit-Reset',
  'RateLimit-Limit',
  'RateLimit-Remaining',
  'RateLimit-Reset',
  'RateLimit',
  'RateLimit-Policy',
  'ratelimit',
  'Retry-After',
  'retry-after',
  'Content-Type',
  'Access-Control-Expose-Headers',
  'WWW-Authenticate',
  'X-Other',
]

const figure = fc.oneof(
  fc.nat({ max: 200 }).map(String),
  fc.constantFrom('', ' 7', 'x', '-1', '1e3'),
)
const value = fc.oneof(
  figure,
  fc
    .tuple(figure, figure, figure)
    .map(([limit, remaining, reset]) => `limit=${limit}, remaining=${remaining}, reset=${reset}`),
  fc.constantFrom(
    '"per-ip";r=5;t=1',
    ' "per-ip";q=10;w=1',
    '10;w=1;burst=20',
    'limit=10',
    'application/problem+json',
    '',
  ),
)
const entries = fc.array(fc.tuple(fc.constantFrom(...NAMES), value), { maxLength: 8 })
const groups = fc.subarray([X_RATE_LIMIT_GROUP, DRAFT_6_GROUP, DRAFT_7_GROUP])

describe('mergeGroups, against the one before it was made smaller', () => {
  it('makes the same writes, reading the same fields', () => {
    fc.assert(
      fc.property(groups, entries, entries, (groups, ours, theirs) => {
        const response = new Map<string, string>()
        for (const [name, text] of theirs) response.set(name.toLowerCase(), text)
        const reads = (log: string[]) => (name: string) => {
          log.push(name)
          return response.get(name)
        }
        const newReads: string[] = []
        const oldReads: string[] = []
        expect(mergeGroups(groups, ours, reads(newReads))).toEqual(
          oldMergeGroups(groups, ours, reads(oldReads)),
        )
        expect(newReads).toEqual(oldReads)
      }),
      { numRuns: 20_000 },
    )
  })
})
