// The `figures` option, refused at start-up naming the option and field.
import { describe, expect, it } from 'vitest'
import { composeAdapterKit } from '../adapter/kit.js'
import { tokenBucket } from '../algorithms/index.js'
import { apiKeyIdentity } from '../identity/identities.js'
import type { RuleConfig } from '../rules/types.js'
import { mapStore } from '../store/map-store.js'
import { memoryStore } from '../store/memory-store.js'
import type { Store } from '../store/types.js'
import { clientFigures } from './client-figures.js'
import { createLimiter } from './create-limiter.js'

const BUCKET: RuleConfig = {
  id: 'per-key',
  match: { identity: 'api_key' },
  algorithm: 'token_bucket',
  rate: 1,
  period: '1s',
  burst: 5,
}
const of = () => ({ burst: 10 })

function refusal(figures: unknown, rules: RuleConfig[] = [BUCKET], store?: Store) {
  try {
    createLimiter({ rules, figures: figures as never, store: store ?? memoryStore() })
  } catch (error) {
    return error as { code: string; field: string; message: string }
  }
  throw new Error('not refused')
}

describe('the figures option, checked at start-up', () => {
  it('refuses an unknown rule id, naming the rules there are', () => {
    const error = refusal({ 'per-kye': { of } })
    expect(error).toMatchObject({ code: 'ERR_RL_INVALID_OPTION', field: 'figures.per-kye' })
    expect(error.message).toContain('no rule "per-kye" (rules: per-key)')
  })

  it('refuses an of that is not a function', () => {
    const error = refusal({ 'per-key': { of: { burst: 10 } } })
    expect(error).toMatchObject({ field: 'figures.per-key.of' })
    expect(error.message).toContain('expected a function')
  })

  it('refuses a bad cacheFor or timeout, with the duration’s problem', () => {
    for (const [field, value, problem] of [
      ['cacheFor', 300, 'bare number has no unit'],
      ['cacheFor', '5 fortnights', "expected a duration such as '500ms'"],
      ['cacheFor', '0s', 'expected a duration > 0'],
      ['timeout', true, "expected a duration such as '500ms'"],
    ] as const) {
      const error = refusal({ 'per-key': { of, [field]: value } })
      expect(error, `${field}: ${value}`).toMatchObject({ field: `figures.per-key.${field}` })
      expect(error.message).toContain(problem)
    }
  })

  it('refuses a bad maxClients, an unknown field and a source that is not an object', () => {
    expect(refusal({ 'per-key': { of, maxClients: 0 } })).toMatchObject({
      field: 'figures.per-key.maxClients',
    })
    const unknown = refusal({ 'per-key': { of, cachefor: '5m' } })
    expect(unknown.message).toContain('figures.per-key: unknown option "cachefor"')
    expect(unknown.message).toContain('did you mean "cacheFor"')
    expect(refusal({ 'per-key': of })).toMatchObject({ field: 'figures.per-key' })
    expect(refusal([{ of }])).toMatchObject({ field: 'figures' })
  })

  it('refuses rules whose requests wait, hold slots or settle', () => {
    const rules: RuleConfig[] = [
      { id: 'slots', match: { identity: 'api_key' }, algorithm: 'concurrency', limit: 2 },
      {
        id: 'line',
        match: { identity: 'api_key' },
        algorithm: 'leaky_queue',
        rate: 1,
        period: '1s',
        burst: 2,
      },
      { ...BUCKET, id: 'metered', settle: true } as RuleConfig,
    ]
    for (const id of ['slots', 'line', 'metered']) {
      const error = refusal({ [id]: { of } }, rules)
      expect(error, id).toMatchObject({ field: `figures.${id}` })
      expect(error.message).toContain(`rule "${id}"`)
    }
  })

  it('refuses a store that cannot carry a key between figures, naming the rule and the stores that can', () => {
    const error = refusal({ 'per-key': { of } }, [BUCKET], mapStore())
    expect(error).toMatchObject({ field: 'figures.per-key' })
    expect(error.message).toContain('rule "per-key"')
    expect(error.message).toContain('memoryStore and redisStore do')
  })

  it('is refused by a middleware composed without the part, naming it', () => {
    // Its rule keys on api_key: the part that reads it is given.
    const createKit = composeAdapterKit({
      algorithms: { token_bucket: tokenBucket },
      store: memoryStore,
      apiKeys: apiKeyIdentity,
    })
    const framework = {
      method: () => 'GET',
      path: () => '/',
      socketAddress: () => '203.0.113.7',
      header: () => undefined,
      user: () => undefined,
    }
    expect(() => createKit([BUCKET], { figures: { 'per-key': { of } } }, framework)).toThrow(
      /figures: needs figures: clientFigures in createRateLimit's parts/,
    )
    const withPart = composeAdapterKit({
      algorithms: { token_bucket: tokenBucket },
      store: memoryStore,
      figures: clientFigures,
      apiKeys: apiKeyIdentity,
    })
    expect(() => withPart([BUCKET], { figures: { 'per-key': { of } } }, framework)).not.toThrow()
  })
})
