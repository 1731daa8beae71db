// What a client hears: the header families and their options (docs/concepts/headers.md).
import { ok, partitionKey, perIp, type Scenario } from './support.js'

export const HEADERS_SCENARIOS: readonly Scenario[] = [
  {
    name: 'by default, RateLimit and RateLimit-Policy of the current draft, and no X-RateLimit-*',
    rules: [perIp(10, 20)],
    options: { legacyHeaders: undefined },
    steps: [
      {
        expect: {
          status: 200,
          headers: {
            'x-ratelimit-limit': undefined,
            'x-ratelimit-remaining': undefined,
            'x-ratelimit-reset': undefined,
            'ratelimit-policy': '"per-ip";q=10;w=1;tollgate-burst=20',
            ratelimit: '"per-ip";r=19;t=1',
          },
        },
      },
    ],
  },
  {
    name: 'draft-7 fields, reset as seconds from now, exposed to browsers',
    rules: [perIp(10, 20)],
    options: { standardHeaders: 'draft-7', legacyReset: 'delta-seconds', exposeHeaders: true },
    steps: [
      {
        expect: ok(19, {
          'x-ratelimit-reset': '1',
          'ratelimit-policy': '10;w=1;burst=20',
          ratelimit: 'limit=20, remaining=19, reset=1',
          'access-control-expose-headers':
            'X-RateLimit-Limit, X-RateLimit-Remaining, X-RateLimit-Reset, RateLimit, RateLimit-Policy, Retry-After',
        }),
      },
    ],
  },
  {
    name: 'draft-6 fields only',
    rules: [perIp(10, 20)],
    options: { standardHeaders: 'draft-6', legacyHeaders: false },
    steps: [
      {
        expect: {
          status: 200,
          headers: {
            'x-ratelimit-remaining': undefined,
            'ratelimit-limit': '20',
            'ratelimit-remaining': '19',
            'ratelimit-reset': '1',
            'ratelimit-policy': '10;w=1;burst=20',
          },
        },
      },
    ],
  },
  {
    name: 'draft-12 fields: a, w and the request’s cost c on RateLimit, the same RateLimit-Policy',
    rules: [perIp(10, 20)],
    options: { standardHeaders: 'draft-12', legacyHeaders: false },
    steps: [
      {
        expect: {
          status: 200,
          headers: {
            'x-ratelimit-remaining': undefined,
            'ratelimit-policy': '"per-ip";q=10;w=1;tollgate-burst=20',
            ratelimit: '"per-ip";a=19;w=1;c=1',
          },
        },
      },
      { times: 19, expect: { status: 200 } },
      {
        // The refusing rule took nothing: no c.
        expect: {
          status: 429,
          headers: { ratelimit: '"per-ip";a=0;w=1', 'retry-after': '1' },
        },
      },
    ],
  },
  {
    name: 'partition keys: a hash of the rate-limit key, by Web Crypto, in both current-form fields',
    rules: [perIp(10, 20)],
    options: { partitionKey: true },
    steps: [
      {
        expect: ok(19, {
          'ratelimit-policy': `"per-ip";q=10;w=1;tollgate-burst=20;pk=${partitionKey('ip:127.0.0.1')}`,
          ratelimit: `"per-ip";r=19;t=1;pk=${partitionKey('ip:127.0.0.1')}`,
        }),
      },
    ],
  },
]
