import { createRequire } from 'node:module'
import { memoryStore, type StandardHeaders, type Store } from '@tollgate/express'
import { manualClock } from '@tollgate/test-utils'
import { parseDictionary, parseItem, parseList } from 'structured-headers'
import { afterAll, describe, expect, it } from 'vitest'
import { type Exchange, normalise } from './exchange.js'
import { type Expect, SCENARIOS, type Scenario, T0 } from './scenarios/index.js'
import { type Client, TARGETS } from './targets.js'

type Run = {
  readonly exchanges: Exchange[]
  readonly shadowDenied: number
  readonly warnings: string[]
  readonly appErrors: unknown[]
}

/**
 * The memory store answers synchronously, which keeps every adapter on its fast path; the same
 * store behind promises (as a remote store answers) takes every adapter down its asynchronous
 * path. Both must give the same answers.
 */
const STORES: ReadonlyArray<readonly [string, (() => Store) | undefined]> = [
  ['memory store', undefined],
  [
    'asynchronous store',
    () => {
      const inner = memoryStore()
      return {
        consume: async (charges, now) => inner.consume(charges, now),
        refund: async (charges, chargedAt, now) => inner.refund(charges, chargedAt, now),
        settle: async (settlements, chargedAt, now) => inner.settle(settlements, chargedAt, now),
      }
    },
  ],
]

async function run(
  scenario: Scenario,
  target: (typeof TARGETS)[number],
  defaultStore: (() => Store) | undefined,
): Promise<Run> {
  const clock = manualClock(T0)
  const warnings: string[] = []
  const appErrors: unknown[] = []
  let shadowDenied = 0
  const skipPaths = scenario.skipPaths ?? []
  const client: Client = await target.start({
    rules: scenario.rules,
    options: {
      // The table reads what remains from `X-RateLimit-Remaining`, which is off by default: a
      // scenario turns it off again (or to the default, `undefined`) where its fields say so.
      legacyHeaders: true,
      ...scenario.options,
      clock,
      ...((scenario.store ?? defaultStore) === undefined
        ? {}
        : { store: (scenario.store ?? defaultStore)!() }),
      logger: { warn: (message) => warnings.push(message) },
    },
    clock,
    skip: (path) => skipPaths.some((prefix) => path.startsWith(prefix)),
    refund: scenario.refund,
    onShadowDenied: () => {
      shadowDenied++
      if (scenario.shadowHookFails === 'throws') throw new Error('the hook broke')
      if (scenario.shadowHookFails === 'rejects') return Promise.reject(new Error('the hook broke'))
      return undefined
    },
    onAppError: (error) => appErrors.push(error),
    settle: scenario.settle,
    estimate: scenario.estimate,
  })
  const exchanges: Exchange[] = []
  try {
    for (const [stepIndex, step] of scenario.steps.entries()) {
      clock.advance(step.advance ?? 0)
      for (let i = 0; i < (step.times ?? 1); i++) {
        const exchange = normalise(
          await client.send({
            method: step.method ?? 'GET',
            path: step.path ?? '/',
            headers: step.headers ?? {},
          }),
        )
        const expected = typeof step.expect === 'function' ? step.expect(i) : step.expect
        const where = `${target.name}, step ${stepIndex + 1}, request ${i + 1}`
        check(exchange, expected, where)
        checkStructuredFields(exchange, scenario.options?.standardHeaders ?? 'draft-11', where)
        exchanges.push(exchange)
      }
    }
  } finally {
    await client.close()
  }
  return { exchanges, shadowDenied, warnings, appErrors }
}

function check(exchange: Exchange, expected: Expect, where: string): void {
  const seen = { status: exchange.status, headers: {} as Record<string, string | undefined> }
  for (const name of Object.keys(expected.headers ?? {}))
    seen.headers[name] = exchange.headers[name]
  expect(seen, where).toEqual({ status: expected.status, headers: expected.headers ?? {} })
  if (typeof expected.body === 'string') expect(exchange.body, where).toBe(expected.body)
  else if (expected.body !== undefined) {
    expect(JSON.parse(exchange.body), where).toMatchObject(expected.body)
  }
}

/**
 * Every RateLimit field parses back as the structured field its draft defines (RFC 9651): the
 * current form's two Lists, draft-7's Dictionary and draft-6's Integers.
 */
function checkStructuredFields(
  exchange: Exchange,
  standard: StandardHeaders | false,
  where: string,
): void {
  const { 'ratelimit-policy': policy, ratelimit: limit } = exchange.headers
  if (standard === 'draft-6') {
    for (const name of ['ratelimit-limit', 'ratelimit-remaining', 'ratelimit-reset']) {
      const value = exchange.headers[name]
      if (value !== undefined) expect(parseItem(value)[0], `${where}: ${name}`).toBeTypeOf('number')
    }
    if (policy !== undefined) expect(() => parseItem(policy), where).not.toThrow()
  } else if (standard === 'draft-7') {
    if (limit !== undefined)
      expect([...parseDictionary(limit).keys()], where).toEqual(['limit', 'remaining', 'reset'])
    if (policy !== undefined) expect(() => parseItem(policy), where).not.toThrow()
  } else {
    if (policy !== undefined) expect(parseList(policy).length, where).toBeGreaterThan(0)
    if (limit !== undefined) expect(parseList(limit).length, where).toBeGreaterThan(0)
  }
}

describe.each(SCENARIOS)('$name', (scenario) => {
  describe.each(scenario.store === undefined ? STORES : STORES.slice(0, 1))(
    '%s',
    (_store, store) => {
      const runs = new Map<string, Run>()

      it.each(TARGETS)('$name', async (target) => {
        const result = await run(scenario, target, store)
        runs.set(target.name, result)
        expect(result.appErrors).toEqual([])
        expect(result.shadowDenied).toBe(scenario.shadowDenied ?? 0)
        for (const code of scenario.warnings ?? []) {
          expect(result.warnings.filter((message) => message.includes(code))).toHaveLength(1)
        }
      })

      it('every adapter answers with the same statuses, headers and bodies', () => {
        expect(runs.size).toBe(TARGETS.length)
        const [first, ...others] = [...runs.entries()]
        for (const [name, other] of others) {
          expect(other.exchanges, `${name} vs ${first![0]}`).toEqual(first![1].exchanges)
          expect(other.warnings, `${name} vs ${first![0]}`).toEqual(first![1].warnings)
        }
      })

      afterAll(() => runs.clear())
    },
  )
})

describe('framework majors', () => {
  it('runs the table on both majors each adapter accepts: Express 5 and 4, Koa 3 and 2', () => {
    const require = createRequire(import.meta.url)
    const major = (name: string) =>
      Number((require(`${name}/package.json`) as { version: string }).version.split('.')[0])
    expect([major('express'), major('express4'), major('koa'), major('koa2')]).toEqual([5, 4, 3, 2])
  })
})
