// A middleware composed without a part refuses the option that needs it, naming the option, the
// part and where to add it (`notComposed`).
import { describe, expect, it } from 'vitest'
import { tokenBucket } from '../algorithms/index.js'
import { isRateLimitError } from '../errors.js'
import { apiKeyIdentity } from '../identity/identities.js'
import { accessLists } from '../limiter/access-lists.js'
import { rulesUpdater } from '../limiter/update.js'
import type { RuleConfig } from '../rules/types.js'
import { mapStore } from '../store/map-store.js'
import { composeAdapterKit } from './kit.js'

const RULES: RuleConfig[] = [
  {
    id: 'per-key',
    match: { identity: 'ip' },
    algorithm: 'token_bucket',
    rate: 1,
    period: '1s',
    burst: 5,
  },
]
const API_KEY_RULES: RuleConfig[] = [{ ...RULES[0]!, match: { identity: ['api_key', 'ip'] } }]
const FRAMEWORK = {
  method: () => 'GET',
  path: () => '/',
  socketAddress: () => '203.0.113.7',
  header: () => undefined,
  user: () => undefined,
}
const algorithms = { token_bucket: tokenBucket }

function refusal(start: () => unknown) {
  try {
    start()
  } catch (error) {
    if (!isRateLimitError(error)) throw error
    return { code: error.code, field: error.field, message: error.message }
  }
  throw new Error('not refused')
}

describe('an option needing a part the middleware was composed without', () => {
  const kit = composeAdapterKit({ algorithms, store: mapStore })
  it.each([
    [
      'store',
      () => composeAdapterKit({ algorithms })(RULES, {}, FRAMEWORK),
      "store: needs store: memoryStore or mapStore in createRateLimit's parts",
    ],
    [
      'partitionKey',
      () => kit(RULES, { partitionKey: true }, FRAMEWORK),
      "partitionKey: needs partitionKeys: partitionKeys in createRateLimit's parts",
    ],
    [
      'trustProxy',
      () => kit(RULES, { trustProxy: 'loopback' }, FRAMEWORK),
      "trustProxy: needs proxies: trustedProxies in createRateLimit's parts",
    ],
    [
      'figures',
      () => kit(RULES, { figures: { 'per-key': { of: () => ({ burst: 10 }) } } }, FRAMEWORK),
      "figures: needs figures: clientFigures in createRateLimit's parts",
    ],
    [
      'onShadowDenied',
      () => kit(RULES, { onShadowDenied: () => undefined }, FRAMEWORK),
      "onShadowDenied: needs shadowHook: shadowDeniedHook in createRateLimit's parts",
    ],
    [
      'update',
      () => kit(RULES, {}, FRAMEWORK).update(RULES),
      "update: needs update: rulesUpdater in createRateLimit's parts",
    ],
    [
      'apiKeyHeader',
      () => kit(RULES, { apiKeyHeader: 'x-key' }, FRAMEWORK),
      "apiKeyHeader: needs apiKeys: apiKeyIdentity in createRateLimit's parts",
    ],
    [
      'bearerAsApiKey',
      () => kit(RULES, { bearerAsApiKey: false }, FRAMEWORK),
      "bearerAsApiKey: needs apiKeys: apiKeyIdentity in createRateLimit's parts",
    ],
    [
      'maxApiKeyLength',
      () => kit(RULES, { maxApiKeyLength: 64 }, FRAMEWORK),
      "maxApiKeyLength: needs apiKeys: apiKeyIdentity in createRateLimit's parts",
    ],
    [
      'lists',
      () => kit(RULES, { lists: accessLists({ deny: { api_key: ['k_1'] } }) }, FRAMEWORK),
      "lists: needs apiKeys: apiKeyIdentity in createRateLimit's parts",
    ],
    [
      'clock',
      () => kit(RULES, { clock: { now: () => 0 } }, FRAMEWORK),
      "clock: needs clock: clockReader in createRateLimit's parts",
    ],
    [
      'missingIdentity',
      () => kit(RULES, { missingIdentity: { status: 403 } }, FRAMEWORK),
      "missingIdentity: needs missingIdentity: missingIdentityStatus in createRateLimit's parts",
    ],
    [
      'legacyHeaders',
      () => kit(RULES, { legacyHeaders: true }, FRAMEWORK),
      "legacyHeaders: needs xRateLimitHeaders in createRateLimit's headers",
    ],
    [
      'standardHeaders',
      () => kit(RULES, { standardHeaders: 'draft-6' }, FRAMEWORK),
      "standardHeaders: needs draft6Headers in createRateLimit's headers",
    ],
  ])('is refused: %s', (field, start, text) => {
    expect(refusal(start)).toEqual({
      code: 'ERR_RL_INVALID_OPTION',
      field,
      message: `[tollgate] ${text}`,
    })
  })
})

describe('a rule keyed on api_key, in a middleware composed without apiKeys', () => {
  const problem = "needs apiKeys: apiKeyIdentity in createRateLimit's parts"
  const expected = {
    code: 'ERR_RL_INVALID_RULE',
    field: 'match.identity',
    message: `[tollgate] rule "per-key": match.identity: ${problem}`,
  }

  it('is refused at start-up, naming the rule, the field and the part', () => {
    expect(
      refusal(() =>
        composeAdapterKit({ algorithms, store: mapStore })(API_KEY_RULES, {}, FRAMEWORK),
      ),
    ).toMatchObject(expected)
  })

  it('is refused by an update, the same way', () => {
    const kit = composeAdapterKit({ algorithms, store: mapStore, update: rulesUpdater })(
      RULES,
      {},
      FRAMEWORK,
    )
    expect(refusal(() => kit.update(API_KEY_RULES))).toMatchObject(expected)
  })

  it('is served with the part, as by rateLimit', () => {
    const kit = composeAdapterKit({ algorithms, store: mapStore, apiKeys: apiKeyIdentity })
    const header = (_req: unknown, name: string) => (name === 'x-api-key' ? 'k_1' : undefined)
    expect(() =>
      kit(API_KEY_RULES, { apiKeyHeader: 'x-api-key' }, { ...FRAMEWORK, header }),
    ).not.toThrow()
  })
})

describe("a store made by the parts' store factory", () => {
  it('is checked at start-up as a store given in the options is', () => {
    const notAStore = (() => ({ consume: () => undefined })) as unknown as typeof mapStore
    expect(
      refusal(() => composeAdapterKit({ algorithms, store: notAStore })(RULES, {}, FRAMEWORK)),
    ).toEqual({
      code: 'ERR_RL_INVALID_OPTION',
      field: 'store',
      message: '[tollgate] store: expected a Store, got one without refund',
    })
  })
})
