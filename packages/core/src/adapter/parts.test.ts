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
      "store: not composed into this middleware: add store: memoryStore or mapStore to createRateLimit's parts",
    ],
    [
      'partitionKey',
      () => kit(RULES, { partitionKey: true }, FRAMEWORK),
      "partitionKey: not composed into this middleware: add partitionKeys: createPartitionKeyHasher to createRateLimit's parts",
    ],
    [
      'trustProxy',
      () => kit(RULES, { trustProxy: 'loopback' }, FRAMEWORK),
      "trustProxy: not composed into this middleware: add proxies: trustedProxies to createRateLimit's parts",
    ],
    [
      'figures',
      () => kit(RULES, { figures: { 'per-key': { of: () => ({ burst: 10 }) } } }, FRAMEWORK),
      "figures: not composed into this middleware: add figures: clientFigures to createRateLimit's parts",
    ],
    [
      'onShadowDenied',
      () => kit(RULES, { onShadowDenied: () => undefined }, FRAMEWORK),
      "onShadowDenied: not composed into this middleware: add shadowHook: shadowDeniedHook to createRateLimit's parts",
    ],
    [
      'update',
      () => kit(RULES, {}, FRAMEWORK).update(RULES),
      "update: not composed into this middleware: add update: rulesUpdater to createRateLimit's parts",
    ],
    [
      'legacyHeaders',
      () => kit(RULES, { legacyHeaders: true }, FRAMEWORK),
      "legacyHeaders: not composed into this middleware: add xRateLimitHeaders to createRateLimit's headers",
    ],
    [
      'standardHeaders',
      () => kit(RULES, { standardHeaders: 'draft-6' }, FRAMEWORK),
      "standardHeaders: not composed into this middleware: add draft6Headers to createRateLimit's headers",
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
