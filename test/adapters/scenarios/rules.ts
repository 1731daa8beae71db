// What rules match and charge: routes, costs, several rules as one unit, shadow mode, plans,
// refunds and skips (docs/reference/rules.md); figures per client (docs/guides/per-client-figures.md).
import { memoryStore } from '@tollgate/express'
import { denied, ok, perIp, resetAt, type Scenario, SHADOW_TIGHT } from './support.js'

export const RULES_SCENARIOS: readonly Scenario[] = [
  {
    name: 'a route cost charges 10 units; a cost that does not fit waits for 10 tokens',
    rules: [
      {
        id: 'labels-bulk',
        match: { route: 'POST /v1/labels:batch', identity: 'api_key' },
        algorithm: 'token_bucket',
        rate: 10,
        burst: 20,
        costByRoute: { 'POST /v1/labels:batch': 10 },
      },
    ],
    steps: [
      { method: 'POST', path: '/v1/labels:batch', headers: { 'x-api-key': 'k_1' }, expect: ok(10) },
      { method: 'POST', path: '/v1/labels:batch', headers: { 'x-api-key': 'k_1' }, expect: ok(0) },
      // 10 tokens at 10/s: 1 s.
      {
        method: 'POST',
        path: '/v1/labels:batch',
        headers: { 'x-api-key': 'k_1' },
        expect: denied(1, ['labels-bulk']),
      },
      // Another key has its own bucket; another method is not this rule's route.
      { method: 'POST', path: '/v1/labels:batch', headers: { 'x-api-key': 'k_2' }, expect: ok(10) },
      {
        path: '/v1/labels:batch',
        headers: { 'x-api-key': 'k_1' },
        expect: {
          status: 200,
          headers: { 'x-ratelimit-remaining': undefined, ratelimit: undefined },
        },
      },
      // The query string is not part of the route.
      {
        advance: 1000,
        method: 'POST',
        path: '/v1/labels:batch?dry=1',
        headers: { 'x-api-key': 'k_1' },
        expect: ok(0),
      },
    ],
  },
  {
    name: 'several rules decide as one unit: the login limit denies, and charges nothing to per-ip',
    rules: [
      perIp(1, 5),
      {
        id: 'login-per-ip',
        match: { route: 'POST /v1/login', identity: 'ip' },
        algorithm: 'sliding_log',
        limit: 3,
        window: '60s',
      },
    ],
    steps: [
      // The deciding rule (fewest left) is login-per-ip; RateLimit lists both, in rule order.
      {
        method: 'POST',
        path: '/v1/login',
        expect: ok(2, {
          'x-ratelimit-limit': '3',
          'x-ratelimit-reset': resetAt(60),
          'ratelimit-policy': '"per-ip";q=1;w=1;tollgate-burst=5, "login-per-ip";q=3;w=60',
          ratelimit: '"per-ip";r=4;t=1, "login-per-ip";r=2;t=60',
        }),
      },
      {
        method: 'POST',
        path: '/v1/login',
        times: 2,
        expect: (i) =>
          ok(1 - i, {
            ratelimit: `"per-ip";r=${3 - i};t=${2 + i}, "login-per-ip";r=${1 - i};t=60`,
          }),
      },
      // The 4th login waits for the oldest attempt to leave the 60 s log; per-ip keeps its 2.
      {
        method: 'POST',
        path: '/v1/login',
        expect: denied(60, ['login-per-ip'], {
          'x-ratelimit-limit': '3',
          ratelimit: '"per-ip";r=2;t=3, "login-per-ip";r=0;t=60',
        }),
      },
      {
        path: '/v1/orders',
        expect: ok(1, { 'x-ratelimit-limit': '5', ratelimit: '"per-ip";r=1;t=4' }),
      },
    ],
  },
  {
    name: 'a shadow rule never denies, is reported through the hook, and is not advertised',
    rules: [perIp(10, 10), SHADOW_TIGHT],
    steps: [
      {
        times: 3,
        expect: (i) =>
          ok(9 - i, {
            'ratelimit-policy': '"per-ip";q=10;w=1',
            ratelimit: `"per-ip";r=${9 - i};t=1`,
          }),
      },
    ],
    shadowDenied: 2,
  },
  ...(['throws', 'rejects'] as const).map(
    (fails): Scenario => ({
      name: `an onShadowDenied hook that ${fails} is logged once, and the request goes on`,
      rules: [perIp(10, 10), SHADOW_TIGHT],
      steps: [{ times: 3, expect: (i) => ok(9 - i) }],
      shadowDenied: 2,
      shadowHookFails: fails,
      warnings: ['WARN_ON_SHADOW_DENIED_THREW'],
    }),
  ),
  {
    name: 'rules match on the plan the app reports',
    rules: [
      {
        id: 'free-global',
        match: { plan: 'free', identity: 'ip' },
        algorithm: 'token_bucket',
        rate: 1,
        burst: 1,
      },
    ],
    steps: [
      { headers: { 'x-test-plan': 'free' }, expect: ok(0) },
      { headers: { 'x-test-plan': 'free' }, expect: denied(1, ['free-global']) },
      {
        headers: { 'x-test-plan': 'pro' },
        expect: { status: 200, headers: { ratelimit: undefined } },
      },
      { expect: { status: 200, headers: { ratelimit: undefined } } },
    ],
  },
  {
    name: 'a client’s plan upgrade raises its limit mid-trace, and what it used carries over',
    rules: [
      {
        id: 'per-key',
        match: { identity: 'api_key' },
        algorithm: 'token_bucket',
        rate: 1,
        burst: 3,
      },
    ],
    // Carrying a key's state between figures needs the memory store.
    store: () => memoryStore(),
    options: {
      figures: {
        'per-key': {
          // Read asynchronously, as from a database: the first request of a client waits for it.
          of: async ({ plan }) => (plan === 'pro' ? { burst: 10 } : undefined),
          cacheFor: '5m',
        },
      },
    },
    steps: [
      {
        headers: { 'x-api-key': 'k_1', 'x-test-plan': 'free' },
        times: 3,
        expect: (i) => ok(2 - i, { 'x-ratelimit-limit': '3' }),
      },
      { headers: { 'x-api-key': 'k_1', 'x-test-plan': 'free' }, expect: denied(1, ['per-key']) },
      // Upgraded: 10 instead of 3, of which the 3 used stay used (onChange: keep).
      {
        headers: { 'x-api-key': 'k_1', 'x-test-plan': 'pro' },
        expect: ok(6, { 'x-ratelimit-limit': '10' }),
      },
      // Another client on the free plan is not affected.
      {
        headers: { 'x-api-key': 'k_2', 'x-test-plan': 'free' },
        expect: ok(2, { 'x-ratelimit-limit': '3' }),
      },
    ],
  },
  {
    name: 'routes with parameters match any value, never the query string or a longer path',
    rules: [
      {
        id: 'orders',
        match: { route: '/v1/orders/:id', identity: 'ip' },
        algorithm: 'fixed_window',
        limit: 2,
        window: '60s',
      },
    ],
    steps: [
      { path: '/v1/orders/42?expand=items', expect: ok(1, { 'x-ratelimit-reset': resetAt(60) }) },
      { path: '/v1/orders/43', expect: ok(0) },
      { path: '/v1/orders/44', expect: denied(60, ['orders']) },
      { path: '/v1/orders', expect: { status: 200, headers: { ratelimit: undefined } } },
      { path: '/v1/orders/44/items', expect: { status: 200, headers: { ratelimit: undefined } } },
    ],
  },
  {
    name: 'failed requests are refunded when asked; denied ones are not',
    rules: [perIp(1, 2)],
    refund: 'failed',
    steps: [
      // Each 500 shows what it was charged, then gets it back.
      {
        path: '/fail',
        times: 3,
        expect: { status: 500, headers: { 'x-ratelimit-remaining': '1' }, body: 'failed' },
      },
      { expect: ok(1) },
      { expect: ok(0) },
      { path: '/fail', expect: denied(1, ['per-ip']) },
      { expect: denied(1, ['per-ip']) },
    ],
  },
  {
    name: 'a refund after its fixed window has rolled over gives nothing back to the new window',
    rules: [
      {
        id: 'per-ip',
        match: { identity: 'ip' },
        algorithm: 'fixed_window',
        limit: 2,
        window: '10s',
      },
    ],
    refund: 'failed',
    steps: [
      { expect: ok(1, { 'x-ratelimit-reset': resetAt(10) }) },
      // Charged at 9 s in the first window; the handler takes 2 s, so the refund comes at 11 s.
      {
        advance: 9000,
        path: '/fail/advance/2000',
        expect: { status: 500, headers: { 'x-ratelimit-remaining': '0' } },
      },
      { expect: ok(1, { 'x-ratelimit-reset': resetAt(20) }) },
      { expect: ok(0) },
      { expect: denied(9, ['per-ip']) },
      // Within one window the refund does count: 1 left after a refunded failure, not 0.
      {
        advance: 9000,
        path: '/fail/advance/1000',
        expect: { status: 500, headers: { 'x-ratelimit-remaining': '1' } },
      },
      { expect: ok(1) },
    ],
  },
  {
    name: 'refunding successes counts only failures (e.g. failed logins)',
    rules: [
      {
        id: 'failures',
        match: { identity: 'ip' },
        algorithm: 'sliding_log',
        limit: 2,
        window: '60s',
      },
    ],
    refund: 'succeeded',
    steps: [
      { times: 3, expect: ok(1) },
      {
        path: '/fail',
        times: 2,
        expect: (i) => ({ status: 500, headers: { 'x-ratelimit-remaining': String(1 - i) } }),
      },
      { path: '/fail', expect: denied(60, ['failures']) },
      { expect: denied(60, ['failures']) },
    ],
  },
  {
    name: 'skipped requests are neither counted nor limited',
    rules: [perIp(1, 1)],
    skipPaths: ['/health'],
    steps: [
      {
        path: '/health',
        times: 3,
        expect: { status: 200, headers: { 'x-ratelimit-remaining': undefined } },
      },
      { expect: ok(0) },
      { expect: denied(1, ['per-ip']) },
      { path: '/health', expect: { status: 200, headers: { ratelimit: undefined } } },
    ],
  },
]
