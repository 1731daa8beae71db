import { execFileSync } from 'node:child_process'
import { readdirSync } from 'node:fs'
import { join, relative } from 'node:path'
import { describe, expect, it } from 'vitest'
import { EXIT } from './cli.js'
import { PACKAGE_DIR, run } from './test-run.js'

const REPO = join(PACKAGE_DIR, '../..')

/** Every rules file in the repository (named rules.yaml, *.rules.yaml, *.rules.json, …). */
function rulesFiles(dir = REPO): string[] {
  const found: string[] = []
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (['node_modules', 'dist', '.git', 'broken'].includes(entry.name)) continue
    const path = join(dir, entry.name)
    if (entry.isDirectory()) found.push(...rulesFiles(path))
    else if (/(^|\.)rules\.(ya?ml|json)$/.test(entry.name)) found.push(relative(PACKAGE_DIR, path))
  }
  return found
}

describe('tollgate check on every rules file in the repository', () => {
  const files = rulesFiles()

  it('finds the gateway example and the CLI fixtures', () => {
    expect(files).toContain('../../examples/shiplane-gateway/rules.yaml')
    expect(files.length).toBeGreaterThanOrEqual(3)
  })

  it.each(files)('%s is valid and every rule is in the table', (file) => {
    // Memory measured on 10,000 keys: the table's figures, not the measurement, are under test.
    const { code, out, err } = run('check', file, '--keys', '10000')
    expect(err).toBe('')
    expect(code).toBe(EXIT.ok)
    const ids = [
      ...out.matchAll(
        /^(\S+)\s+(token_bucket|gcra|leaky_bucket|fixed_window|sliding_log|sliding_window)\b/gm,
      ),
    ]
    expect(out).toMatch(new RegExp(`: ${ids.length} rules?, valid`))
    expect(ids.length).toBeGreaterThan(0)
  })
})

describe('the rules table', () => {
  const { out } = run('check', '../../examples/shiplane-gateway/rules.yaml', '--keys', '10000')
  const row = (id: string) =>
    out
      .split('\n')
      .find((line) => line.startsWith(`${id} `))!
      .split(/\s{2,}/)

  it('gives each rule per second, minute and day, its burst, its state per key and memory for N keys', () => {
    expect(out).toContain('memory, 10,000 keys')
    // 10 per second, bursts of 20, two numbers of state.
    expect(row('free-global').slice(0, 7)).toEqual([
      'free-global',
      'token_bucket',
      '10',
      '600',
      '864,000',
      '20',
      '16 B',
    ])
    // 10,000 per day.
    expect(row('free-daily').slice(1, 6)).toEqual([
      'fixed_window',
      '0.116',
      '6.94',
      '10,000',
      '10,000',
    ])
    // 5 per 60 s: a log of 5 timestamps and 3 numbers of header.
    expect(row('login-per-ip').slice(1, 7)).toEqual([
      'sliding_log',
      '0.0833',
      '5',
      '7,200',
      '5',
      '64 B',
    ])
  })

  it('measures the memory store: a token-bucket key takes a 16-byte slot and the table’s room to grow, as documented', () => {
    const memory = row('free-global')[7]!
    const [value, unit] = memory.split(' ')
    expect(unit).toBe('KiB')
    const perKey = (Number(value) * 1024) / 10_000
    // 10,000 keys in a table of 16,384 slots: 26.2 B each.
    expect(perKey).toBeGreaterThanOrEqual(21)
    expect(perKey).toBeLessThanOrEqual(28)
  })

  it('names what each rule applies to', () => {
    expect(row('labels-bulk')[8]).toBe(
      'per api_key, POST /v1/labels:batch, 10 per 1 s, POST /v1/labels:batch costs 10',
    )
    expect(row('login-per-ip')[8]).toContain('fails closed')
  })
})

describe('tollgate check on broken rules files', () => {
  it.each([
    ['unknown-field.yaml', ['rule "free-global": burts: unknown field; did you mean "burst"?']],
    ['not-yaml.yaml', ['rules: not valid YAML']],
    ['zero-burst.yaml', ['rule "free-global": burst: expected a whole number ≥ 1, got 0']],
    ['custom-identity.yaml', ['rule "per-account": match.identity: no identity "account"']],
    ['duplicate-key.json', ['not valid JSON: keys must be unique: "id" again at line 4']],
    [
      'two-problems.yaml',
      [
        '3 problems:',
        'rule "login": limit: expected a whole number ≥ 1, got -5',
        'did you mean "leaky_bucket"?',
      ],
    ],
  ])('%s: exit 1, the start-up message naming the rule and field', (name, messages) => {
    const file = `fixtures/broken/${name}`
    const { code, out, err } = run('check', file)
    expect(code).toBe(EXIT.invalid)
    expect(out).toBe('')
    expect(err.startsWith(`${file}: [tollgate] `)).toBe(true)
    for (const message of messages) expect(err).toContain(message)
  })

  it('takes the identities the app provides', () => {
    expect(run('check', 'fixtures/broken/custom-identity.yaml', '--identity', 'account').code).toBe(
      EXIT.ok,
    )
  })
})

describe('the command line', () => {
  it.each([
    [[], 'no command given'],
    [['chek', 'rules.yaml'], 'unknown command "chek"'],
    [['check'], 'expected a rules file, got none'],
    [['check', 'fixtures/rules/free-plan.rules.yaml', '--kyes', '5'], "Unknown option '--kyes'"],
    [
      ['check', 'fixtures/rules/free-plan.rules.yaml', '--keys', 'many'],
      '--keys: expected a whole number ≥ 1, got many',
    ],
    [['check', 'missing.yaml'], 'cannot read missing.yaml'],
    [['check', 'fixtures/traces/free-plan.csv'], 'expected a file ending in .json, .yaml, .yml'],
  ])('%j: exit 2 with the reason and the usage', (argv, message) => {
    const { code, err } = run(...argv)
    expect(code).toBe(EXIT.usage)
    expect(err).toContain(message)
    expect(err).toContain('Usage:')
  })

  it('help prints the usage and exits 0', () => {
    expect(run('--help')).toMatchObject({ code: EXIT.ok, err: '' })
    expect(run('help').out).toContain('tollgate check <rules.yaml|rules.json>')
  })

  it('the bin sets the exit status', () => {
    const bin = ['--conditions=@tollgate/source', '--import', 'tsx', 'src/bin.ts']
    const status = (...args: string[]) => {
      try {
        execFileSync(process.execPath, [...bin, ...args], { cwd: PACKAGE_DIR, stdio: 'pipe' })
        return 0
      } catch (error) {
        return (error as { status: number }).status
      }
    }
    expect(status('check', 'fixtures/rules/free-plan.rules.yaml')).toBe(0)
    expect(status('check', 'fixtures/broken/zero-burst.yaml')).toBe(1)
    expect(status('check')).toBe(2)
  }, 120_000)
})
