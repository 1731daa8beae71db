/**
 * `pnpm demo` on the memory store, run as a user runs it: its output must keep showing the
 * specification's figures, and it must exit 0 on its own.
 */
import { beforeAll, describe, expect, it } from 'vitest'
import { rowPattern, runDemoCli } from './run-cli.js'

let stdout = ''

beforeAll(async () => {
  const run = await runDemoCli({ REDIS_URL: '' })
  expect(run.stderr).toBe('')
  expect(run.code).toBe(0)
  stdout = run.stdout
}, 60_000)

const FREE = ['GET /v1/quotes', 'key k_free_acme']

describe('pnpm demo (memory store)', () => {
  it('loads the four rules from rules.yaml', () => {
    expect(stdout).toContain('Store: memory')
    expect(stdout).toMatch(
      /free-global\s+token_bucket\s+10 per 1 s, burst 20\s+per api_key, plan free/,
    )
    expect(stdout).toMatch(/free-daily\s+fixed_window\s+10000 per 86400 s/)
    expect(stdout).toMatch(/labels-bulk\s+token_bucket\s+10 per 1 s, burst 20\s+.*cost 10/)
    expect(stdout).toMatch(/login-per-ip\s+sliding_log\s+5 per 60 s\s+per ip, on POST \/v1\/login/)
  })

  it('plays the Free plan burst: 20 of 25, then 5 of 8, then 1 with 19 left', () => {
    expect(stdout).toContain('t = 0 s: 25 sent, 20 allowed, 5 denied')
    expect(stdout).toContain('t = 0.5 s: 8 sent, 5 allowed, 3 denied')
    expect(stdout).toContain('t = 2.5 s: 1 sent, 1 allowed, 0 denied')
    const rateLimit = (r: number, t: number, daily: number, td: number) =>
      `"free-global";r=${r};t=${t}, "free-daily";r=${daily};t=${td}`
    expect(stdout).toMatch(
      rowPattern(['12:00:00.000', ...FREE, '200', '19', '-', rateLimit(19, 1, 9999, 43200)]),
    )
    expect(stdout).toMatch(
      rowPattern(['12:00:00.000', ...FREE, '429', '0', '1', rateLimit(0, 1, 9980, 43200)]),
    )
    // 26 admitted in all: the 8 denials took nothing from the daily quota either.
    expect(stdout).toMatch(
      rowPattern(['12:00:02.500', ...FREE, '200', '19', '-', rateLimit(19, 1, 9974, 43198)]),
    )
    expect(stdout).toContain(
      'RateLimit-Policy: "free-global";q=10;w=1;tollgate-burst=20, "free-daily";q=10000;w=86400',
    )
    expect(stdout).toContain(
      '429 body, detail: Too many requests for the rate-limit policy "free-global" (10 per 1 s, bursts of 20). Retry after 1 s.',
    )
  })

  it('charges 10 for a bulk call, and tells the third to retry in 1 s', () => {
    const bulk = ['POST /v1/labels:batch', 'key k_growth_globex']
    expect(stdout).toMatch(
      rowPattern(['12:00:03.000', ...bulk, '200', '10', '-', '"labels-bulk";r=10;t=1']),
    )
    expect(stdout).toMatch(
      rowPattern(['12:00:03.000', ...bulk, '200', '0', '-', '"labels-bulk";r=0;t=2']),
    )
    expect(stdout).toMatch(
      rowPattern(['12:00:03.000', ...bulk, '429', '0', '1', '"labels-bulk";r=0;t=1']),
    )
    expect(stdout).toMatch(
      rowPattern(['12:00:04.000', ...bulk, '200', '0', '-', '"labels-bulk";r=0;t=2']),
    )
  })

  it('admits 5 logins a minute per IP, and hammering does not move the retry time', () => {
    const login = ['POST /v1/login', 'from 203.0.113.95']
    for (const [second, left] of [
      [1, 4],
      [2, 3],
      [3, 2],
      [4, 1],
      [5, 0],
    ] as const) {
      expect(stdout).toMatch(
        rowPattern([
          `12:05:0${second}.000`,
          ...login,
          '200',
          String(left),
          '-',
          `"login-per-ip";r=${left};t=60`,
        ]),
      )
    }
    expect(stdout).toContain('12:05:06.000: 10 sent, 0 allowed, 10 denied')
    expect(stdout).toMatch(
      rowPattern(['12:05:06.000', ...login, '429', '0', '55', '"login-per-ip";r=0;t=55']),
    )
    expect(stdout).toMatch(
      rowPattern(['12:06:01.000', ...login, '200', '0', '-', '"login-per-ip";r=0;t=60']),
    )
  })

  it('keys the attacker by the address the load balancer appended, whatever it spoofs', () => {
    const spoofed = (value: string) => [
      'POST /v1/login',
      `from 203.0.113.95, spoofing X-Forwarded-For: ${value}`,
    ]
    expect(stdout).toMatch(
      rowPattern([
        '12:05:30.000',
        ...spoofed('198.51.100.1'),
        '429',
        '0',
        '31',
        '"login-per-ip";r=0;t=31',
      ]),
    )
    expect(stdout).toMatch(
      rowPattern([
        '12:05:31.000',
        ...spoofed('203.0.113.96, 10.0.0.7'),
        '429',
        '0',
        '30',
        '"login-per-ip";r=0;t=30',
      ]),
    )
    expect(stdout).toMatch(
      rowPattern([
        '12:05:31.000',
        'POST /v1/login',
        'from 198.51.100.7',
        '200',
        '4',
        '-',
        '"login-per-ip";r=4;t=60',
      ]),
    )
  })

  it('holds the slow report endpoint to two at once, with a line of one, then sheds under a stall', () => {
    const report = (id: string) => `GET /v1/reports/${id}`
    const rows: string[][] = [
      ['12:07:00.000', report('r1'), '200', '12:07:01.000', '-', 'ran 1.0 s at once'],
      [
        '12:07:00.000',
        report('r3'),
        '200',
        '12:07:04.000',
        '-',
        'waited 1.0 s for a slot, then ran 3.0 s',
      ],
      [
        '12:07:00.000',
        report('r4'),
        '429',
        '12:07:00.000',
        '1',
        'refused at once: two running, the line of one is full',
      ],
      [
        '12:07:01.500',
        report('r5'),
        '429',
        '12:07:03.500',
        '1',
        'waited 2.0 s in line, no slot came: refused',
      ],
      [
        '12:07:05.000',
        'GET /health',
        '200',
        '12:07:05.000',
        '-',
        'served during the stall: a critical route',
      ],
      [
        '12:07:05.000',
        report('r6'),
        '503',
        '12:07:05.000',
        '1',
        'shed: the event loop is stalled (temporary-reduced-capacity)',
      ],
      [
        '12:07:05.500',
        report('r7'),
        '200',
        '12:07:05.500',
        '-',
        'served: the delay signal is back under the bound',
      ],
    ]
    for (const row of rows) expect(stdout).toMatch(rowPattern(row))
    expect(stdout).toContain('Slots in use once the reports are done: 0')
  })

  it("ends with the specification's figures computed by the algorithms", () => {
    expect(stdout).toContain('The burst at t = 0: 20 of 25 admitted.')
    expect(stdout).toMatch(/sliding window counter\s+admitted 116 of 200/)
    expect(stdout).toContain('20 allowed; the 21st denied, retry in 100 ms')
  })
})
