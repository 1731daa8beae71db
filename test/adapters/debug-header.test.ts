// The development-only Tollgate-Debug field, on every adapter: on admissions and denials when
// the environment is development, absent otherwise, and never with a client's address.
import { createLimiter, type RuleConfig } from '@tollgate/core'
import { debugHeader } from '@tollgate/core/observe'
import { manualClock } from '@tollgate/test-utils'
import { describe, expect, it } from 'vitest'
import type { AppSetup } from './exchange.js'
import { T0 } from './scenarios/index.js'
import { TARGETS } from './targets.js'

const RULES: RuleConfig[] = [
  { id: 'per-ip', match: { identity: 'ip' }, algorithm: 'fixed_window', limit: 1, window: '1m' },
]

async function statusesAndFields(target: (typeof TARGETS)[number], environment?: string) {
  const clock = manualClock(T0)
  const limiter = createLimiter({ rules: RULES, clock, logger: false })
  const warnings: string[] = []
  const client = await target.start({
    rules: limiter as never,
    // A request hook, not a core option: the targets pass their options through to rateLimit().
    options: {
      logger: false,
      debugHeader: debugHeader(limiter, {
        environment,
        logger: { warn: (line) => warnings.push(line) },
      }),
    } as AppSetup['options'],
    clock,
    skip: () => false,
    refund: undefined,
    onShadowDenied: () => undefined,
    onAppError: (error) => {
      throw error
    },
  })
  try {
    const answers = []
    for (let i = 0; i < 2; i++)
      answers.push(await client.send({ method: 'GET', path: '/', headers: {} }))
    return { answers, warnings }
  } finally {
    await client.close()
  }
}

describe.each(TARGETS)('Tollgate-Debug on $name', (target) => {
  it('explains admissions and denials in development, keys hashed, and says it is on', async () => {
    const { answers, warnings } = await statusesAndFields(target, 'development')
    expect(answers.map((answer) => answer.status)).toEqual([200, 429])
    const [admitted, denied] = answers.map((answer) => answer.headers['tollgate-debug'])
    expect(admitted).toMatch(
      /^per-ip;admitted;remaining=0\/1;key="ip:#[0-9a-f]{8}";why="fixed_window: /,
    )
    expect(denied).toMatch(/^per-ip;denied;remaining=0\/1;retry-ms=\d+;key="ip:#[0-9a-f]{8}";why="/)
    expect(`${admitted}${denied}`).not.toMatch(/127\.0\.0\.1|::1/)
    expect(warnings.filter((line) => line.includes('WARN_DEBUG_HEADER_ON'))).toHaveLength(1)
  })

  it.each([undefined, 'production', 'test'])(
    'is never sent when the environment is %s',
    async (environment) => {
      const { answers, warnings } = await statusesAndFields(target, environment)
      expect(answers.map((answer) => answer.status)).toEqual([200, 429])
      expect(answers.map((answer) => answer.headers['tollgate-debug'])).toEqual([
        undefined,
        undefined,
      ])
      expect(warnings).toEqual([])
    },
  )
})
