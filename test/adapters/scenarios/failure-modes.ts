// A store that fails: each rule's fail-open or fail-closed policy, never a 500
// (docs/concepts/failure-modes.md).
import { downStore, garbledStore, perIp, type Scenario } from './support.js'

export const FAILURE_MODES_SCENARIOS: readonly Scenario[] = [
  {
    name: 'a store that throws lets fail-open rules through, with no made-up figures',
    rules: [perIp(10, 10)],
    store: downStore(false),
    steps: [
      {
        times: 2,
        expect: {
          status: 200,
          headers: { 'x-ratelimit-remaining': undefined, ratelimit: undefined },
          body: 'ok',
        },
      },
    ],
    warnings: ['allowed (fail-open)'],
  },
  {
    name: 'a store that rejects makes a fail-closed rule answer 503 with a short Retry-After, never 500',
    rules: [perIp(10, 10, { id: 'per-ip-closed', onStoreError: 'closed' }), perIp(10, 10)],
    store: downStore(true),
    steps: [
      {
        expect: {
          status: 503,
          headers: {
            'retry-after': '1',
            'content-type': 'application/problem+json',
            ratelimit: undefined,
          },
          body: {
            type: 'https://iana.org/assignments/http-problem-types#temporary-reduced-capacity',
            status: 503,
            'violated-policies': ['per-ip-closed'],
            retryAfter: 1,
          },
        },
      },
    ],
    warnings: ['denied (fail-closed)'],
  },
  {
    name: 'a store answering garbage follows each rule’s onStoreError, never 500',
    rules: [perIp(10, 10, { id: 'per-ip-closed', onStoreError: 'closed' })],
    store: garbledStore,
    steps: [
      {
        expect: {
          status: 503,
          headers: { 'retry-after': '1', ratelimit: undefined, 'x-ratelimit-remaining': undefined },
          body: {
            type: 'https://iana.org/assignments/http-problem-types#temporary-reduced-capacity',
            status: 503,
            'violated-policies': ['per-ip-closed'],
            retryAfter: 1,
          },
        },
      },
    ],
    warnings: ['denied (fail-closed)'],
  },
]
