import { describe, expect, it } from 'vitest'
import { loadShedder } from '../adapter/shed.js'
import { isRateLimitError } from '../errors.js'
import { createIdentityResolver } from '../identity/identities.js'
import { createLimiter } from '../limiter/create-limiter.js'
import { observedLimiter } from '../observe/observed-limiter.js'
import { shadowReport } from '../observe/shadow-report.js'
import { createResponder } from '../response/responder.js'
import type { RuleConfig } from '../rules/types.js'
import { mapStore } from '../store/map-store.js'
import { memoryStore } from '../store/memory-store.js'
import {
  checkBoolean,
  checkFunction,
  checkMethods,
  checkOneOf,
  checkWhole,
  invalidOption,
} from './option-values.js'

const RULES: RuleConfig[] = [
  { id: 'per-ip', match: { identity: 'ip' }, algorithm: 'token_bucket', rate: 10, burst: 20 },
]

/** The error `start` throws, which must be an option's: its code, the option and the message. */
function refusal(start: () => unknown): { code: string; field?: string; message: string } {
  try {
    start()
  } catch (error) {
    if (!isRateLimitError(error)) throw error
    return { code: error.code, field: error.field, message: error.message }
  }
  throw new Error('the value was accepted')
}

describe('the checks every option shares', () => {
  it('accept what they expect and hand it back', () => {
    expect(checkOneOf('mode', 'a', ['a', 'b'])).toBe('a')
    expect(checkBoolean('flag', false)).toBe(false)
    expect(checkWhole('count', 0, { min: 0, max: 3 })).toBe(0)
    const hook = () => 1
    expect(checkFunction('hook', hook)).toBe(hook)
    const clock = { now: () => 0 }
    expect(checkMethods('clock', clock, ['now'], '{ now(): number }')).toBe(clock)
  })

  it.each([
    ['mode', () => checkOneOf('mode', 'c', ['a', 'b']), 'mode: expected one of "a", "b", got "c"'],
    ['flag', () => checkBoolean('flag', 'false'), 'flag: expected true or false, got "false"'],
    [
      'count',
      () => checkWhole('count', 1.5, { min: 1, max: 9 }),
      'count: expected a whole number from 1 to 9, got 1.5',
    ],
    [
      'waitMs',
      () => checkWhole('waitMs', Number.NaN, { min: 1, unit: 'ms' }),
      'waitMs: expected a whole number of ms ≥ 1, got NaN',
    ],
    ['hook', () => checkFunction('hook', 'x'), 'hook: expected a function, got "x"'],
    [
      'clock',
      () => checkMethods('clock', { now: 1 }, ['now'], '{ now(): number }'),
      'clock: expected { now(): number }, got one without now',
    ],
    [
      'clock',
      () => checkMethods('clock', null, ['now'], '{ now(): number }', 'redisStore'),
      'redisStore clock: expected { now(): number }, got null',
    ],
  ])('refuse %s naming the option and what it expects', (field, start, text) => {
    const error = refusal(start)
    expect(error).toMatchObject({ code: 'ERR_RL_INVALID_OPTION', field })
    expect(error.message).toBe(`[tollgate] ${text}`)
  })

  it('show a value JSON cannot write without failing', () => {
    const cycle: { self?: unknown } = {}
    cycle.self = cycle
    expect(refusal(() => checkOneOf<unknown>('x', cycle, [1])).message).toContain(
      'JSON cannot show',
    )
    expect(refusal(() => checkOneOf<unknown>('x', 2n, [1])).message).toContain('got 2n')
    expect(invalidOption('x', 'why').code).toBe('ERR_RL_INVALID_OPTION')
  })
})

// Every factory's option refusals carry the option's code, never a rule's: a table over each.
describe('an option refused by any factory', () => {
  it.each<[string, () => unknown, string]>([
    ['createLimiter store', () => createLimiter({ rules: RULES, store: {} as never }), 'store'],
    ['createLimiter clock', () => createLimiter({ rules: RULES, clock: {} as never }), 'clock'],
    [
      'createLimiter storeErrorRetryAfterMs',
      () => createLimiter({ rules: RULES, storeErrorRetryAfterMs: 0 }),
      'storeErrorRetryAfterMs',
    ],
    [
      'createLimiter algorithms',
      () => createLimiter({ rules: RULES, algorithms: 'all' as never }),
      'algorithms',
    ],
    [
      'createLimiter unknown',
      () => createLimiter({ rules: RULES, windowMs: 1 } as never),
      'windowMs',
    ],
    ['memoryStore maxKeys', () => memoryStore({ maxKeys: 0 }), 'maxKeys'],
    ['memoryStore maxBytes', () => memoryStore({ maxBytes: 10 }), 'maxBytes'],
    ['mapStore unknown', () => mapStore({ maxkeys: 1 } as never), 'maxkeys'],
    [
      'createResponder legacyReset',
      () => createResponder({ legacyReset: 'epoch' as never }),
      'legacyReset',
    ],
    [
      'createResponder legacyHeaders',
      () => createResponder({ legacyHeaders: 'false' as never }),
      'legacyHeaders',
    ],
    ['identities ipv6Prefix', () => createIdentityResolver({ ipv6Prefix: 129 }), 'ipv6Prefix'],
    [
      'identities maxApiKeyLength',
      () => createIdentityResolver({ maxApiKeyLength: 0 }),
      'maxApiKeyLength',
    ],
    [
      'identities trustProxy',
      () => createIdentityResolver({ trustProxy: 'nowhere' }),
      'trustProxy',
    ],
    ['loadShedder unknown', () => loadShedder({ maxInflight: 1 } as never), 'shed.maxInflight'],
    ['loadShedder mode', () => loadShedder({ maxInFlight: 1, mode: 'off' as never }), 'shed.mode'],
    ['shadowReport capacity', () => shadowReport({ capacity: 0 }), 'capacity'],
    [
      'observedLimiter monotonic',
      () => observedLimiter({ rules: RULES, observers: [], monotonic: {} as never }),
      'monotonic',
    ],
  ])('%s: ERR_RL_INVALID_OPTION naming the option', (_, start, field) => {
    const error = refusal(start)
    expect(error.code).toBe('ERR_RL_INVALID_OPTION')
    if (field !== undefined) expect(error.field).toBe(field)
  })

  it('suggests the option meant for a misspelt shedding option', () => {
    expect(refusal(() => loadShedder({ maxInflight: 1 } as never)).message).toContain(
      'did you mean "maxInFlight"?',
    )
  })
})
