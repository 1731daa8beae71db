// A middleware composed without a part refuses the option that needs it, naming the option, the
// part and where to add it (`notComposed`).
import { describe, expect, it } from 'vitest'
import { tokenBucket } from '../algorithms/index.js'
import { isRateLimitError } from '../errors.js'
import type { RuleConfig } from '../rules/types.js'
import { mapStore } from '../store/map-store.js'
import { composeAdapterKit } from './kit.js'

const RULES: RuleConfig[] = [
  {
    id: 'per-key',
    match: { identity: 'api_key' },
    algorithm: 'token_bucket',
    rate: 1,
    period: '1s',
    burst: 5,
  },
]
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
