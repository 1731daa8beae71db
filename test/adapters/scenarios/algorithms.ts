// How the algorithms count, over HTTP (docs/concepts/algorithms.md).
import { denied, ok, perIp, resetAt, type Scenario } from './support.js'

export const ALGORITHMS_SCENARIOS: readonly Scenario[] = [
  {
    name: 'a burst empties the bucket, then 429 with Retry-After until it refills (spec figure)',
    rules: [perIp(10, 20)],
    steps: [
      // Burst 20 at 10/s: 20 pass (19 … 0 left), each back to full 100 ms per spent token.
      {
        times: 20,
        expect: (i) =>
          ok(19 - i, {
            'x-ratelimit-limit': '20',
            'x-ratelimit-reset': resetAt(Math.ceil(((i + 1) * 100) / 1000)),
            'ratelimit-policy': '"per-ip";q=10;w=1;tollgate-burst=20',
            ratelimit: `"per-ip";r=${19 - i};t=${Math.ceil(((i + 1) * 100) / 1000)}`,
          }),
      },
      // The 5 others wait 100 ms for a token: Retry-After rounds up to 1 s; full in 2 s.
      {
        times: 5,
        expect: denied(1, ['per-ip'], {
          'x-ratelimit-reset': resetAt(2),
          ratelimit: '"per-ip";r=0;t=1',
        }),
      },
      // Half a second refills 5 tokens: 5 pass, 3 wait.
      { advance: 500, times: 5, expect: (i) => ok(4 - i) },
      { times: 3, expect: denied(1, ['per-ip']) },
      // Two idle seconds refill the bucket to exactly 20 (never more).
      { advance: 2000, expect: ok(19) },
    ],
  },
]
