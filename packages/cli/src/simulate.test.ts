import { describe, expect, it } from 'vitest'
import { EXIT } from './cli.js'
import { run } from './test-run.js'

describe('tollgate simulate, a named scenario', () => {
  it('minute-boundary prints each lane’s timeline: 200 / 100 / 116 / 133 admitted', () => {
    const { code, out } = run('simulate', '--scenario', 'minute-boundary')
    expect(code).toBe(EXIT.ok)
    const totals = [...out.matchAll(/200 requests: (\d+) allowed/g)].map((m) => Number(m[1]))
    expect(totals).toEqual([200, 100, 116, 133])
    expect(out).toContain('One burst across a minute boundary')
    expect(out).toMatch(
      /60–62 s\s+20 requests\s+0 allowed, 20 denied\s+sliding-log: 0 left; first denied told to retry in 50000 ms/,
    )
  })

  it('free-plan-burst: 20 allowed 5 denied, 5 and 3, then 1 with 19 left', () => {
    const { out } = run('simulate', '--scenario', 'free-plan-burst')
    expect(out).toMatch(
      /0 s\s+25 requests\s+20 allowed, 5 denied\s+free-token-bucket: 0 left; first denied told to retry in 100 ms/,
    )
    expect(out).toMatch(/0\.5 s\s+8 requests\s+5 allowed, 3 denied/)
    expect(out).toMatch(/2\.5 s\s+1 requests\s+1 allowed, 0 denied\s+free-token-bucket: 19 left/)
  })

  it('--svg draws every lane with its admitted count', () => {
    const { code, out, written } = run(
      'simulate',
      '--scenario',
      'minute-boundary',
      '--svg',
      'out.svg',
    )
    expect(code).toBe(EXIT.ok)
    expect(out).toContain('wrote out.svg')
    const svg = written.get('out.svg')!
    expect(svg.startsWith('<svg xmlns="http://www.w3.org/2000/svg"')).toBe(true)
    expect([...svg.matchAll(/(\d+) of 200 allowed/g)].map((m) => Number(m[1]))).toEqual([
      200, 100, 116, 133,
    ])
  })

  it('a rules file replays the scenario’s arrivals instead of the scenario’s rules', () => {
    const { out } = run(
      'simulate',
      'fixtures/rules/minute-boundary.rules.json',
      '--scenario',
      'minute-boundary',
    )
    // The enforcing fixed window decides; the shadow rules only count.
    expect(out).toContain('200 requests: 200 allowed, 0 denied')
  })

  it('lists the scenarios', () => {
    const { out } = run('scenarios')
    for (const name of ['free-plan-burst', 'minute-boundary', 'sliding-counter', 'gcra-21']) {
      expect(out).toContain(name)
    }
  })
})

describe('tollgate simulate, a trace file', () => {
  it('replays CSV through the rules file', () => {
    const { code, out } = run(
      'simulate',
      'fixtures/rules/free-plan.rules.yaml',
      '--trace',
      'fixtures/traces/free-plan.csv',
    )
    expect(code).toBe(EXIT.ok)
    expect(out).toContain('34 requests: 26 allowed, 8 denied')
  })

  it('replays JSON lines, each key on its own bucket, a row’s cost charged', () => {
    const { out } = run(
      'simulate',
      'fixtures/rules/free-plan.rules.yaml',
      '--trace',
      'fixtures/traces/two-keys.jsonl',
    )
    // k_1: 20 of 21, then cost 5 after 1.5 s of refill (15 tokens); k_2: 3 of 3.
    expect(out).toMatch(/0 s\s+24 requests\s+23 allowed, 1 denied/)
    expect(out).toMatch(/1\.5 s\s+1 requests\s+1 allowed, 0 denied\s+free-global: 10 left/)
  })

  it('fills in what the trace leaves out from --plan, --method, --path, --key', () => {
    const { out } = run('simulate', 'fixtures/rules/free-plan.rules.yaml', '--scenario', 'gcra-21')
    // The rule matches plan free only: without --plan no request matches.
    expect(out).toContain('no rule matched')
    const planned = run(
      'simulate',
      'fixtures/rules/free-plan.rules.yaml',
      '--scenario',
      'gcra-21',
      '--plan',
      'free',
    )
    expect(planned.out).toContain('21 requests: 20 allowed, 1 denied')
  })

  it.each([
    [
      [
        'simulate',
        'fixtures/rules/free-plan.rules.yaml',
        '--trace',
        'fixtures/traces/bad-cost.csv',
      ],
      EXIT.invalid,
      'fixtures/traces/bad-cost.csv: line 3: cost: expected a number, got "two"',
    ],
    [
      ['simulate', 'fixtures/broken/zero-burst.yaml', '--trace', 'fixtures/traces/free-plan.csv'],
      EXIT.invalid,
      'burst: expected a whole number ≥ 1, got 0',
    ],
    [
      ['simulate', 'fixtures/rules/free-plan.rules.yaml'],
      EXIT.usage,
      'give --trace FILE or --scenario NAME',
    ],
    [
      ['simulate', '--scenario', 'minute'],
      EXIT.usage,
      'no scenario "minute" (scenarios: free-plan-burst, minute-boundary',
    ],
    [
      ['simulate', '--trace', 'fixtures/traces/free-plan.csv'],
      EXIT.usage,
      'a trace needs a rules file',
    ],
    [
      [
        'simulate',
        'fixtures/rules/free-plan.rules.yaml',
        '--trace',
        'fixtures/rules/free-plan.rules.yaml',
      ],
      EXIT.usage,
      'expected a file ending in .csv, .jsonl, .ndjson',
    ],
  ] as const)('%j exits %i: %s', (argv, exit, message) => {
    const { code, err } = run(...argv)
    expect(code).toBe(exit)
    expect(err).toContain(message)
  })
})
