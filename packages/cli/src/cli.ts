import { parseArgs } from 'node:util'
import { createLimiter, isRateLimitError, type Rule } from '@tollgate/core'
import { loadRulesText } from '@tollgate/core/rules-file'
import {
  type Arrival,
  type Lane,
  parseTrace,
  SCENARIOS,
  scenarioNamed,
  simulate,
  TraceError,
} from '@tollgate/core/simulate'
import { table } from './format.js'
import { ruleFacts, rulesTableRows } from './rules-table.js'
import { timelineSvg } from './svg.js'
import { timelineLines } from './timeline.js'

/** What the CLI touches of the outside world, so that tests run it in-process. */
export type CliIo = {
  /** Reads a rules or trace file, as UTF-8 text. */
  readFile(path: string): string
  /** Writes an output file (`simulate --svg`). */
  writeFile(path: string, text: string): void
  /** Writes one line of output (stdout). */
  out(line: string): void
  /** Writes one line of diagnostics (stderr). */
  err(line: string): void
}

/** Exit codes: 0 done, 1 the rules or the trace are invalid, 2 the command line is. */
export const EXIT = { ok: 0, invalid: 1, usage: 2 } as const

const USAGE = `Usage:
  tollgate check <rules.yaml|rules.json> [--keys N] [--identity NAME]...
  tollgate simulate [rules.yaml] (--trace <trace.csv|trace.jsonl> | --scenario NAME)
                    [--svg out.svg] [--every MS] [--key K] [--plan P] [--method M] [--path P]
                    [--identity NAME]...
  tollgate scenarios

check      validates a rules file as the limiter does at start-up and prints what each rule
           allows per second, minute and day, its burst, its state per key and the memory
           store's bytes for N keys (default 1,000,000).
simulate   replays a trace (CSV with a header row: at_ms or at_s, key, cost, method, path, plan,
           count, every_ms; or JSON lines with those fields) or a named scenario through the
           rules on a virtual clock; without a rules file, a scenario runs its own rules.
scenarios  lists the named scenarios (the specification's worked figures).

Exit status: 0 done, 1 the rules or the trace are invalid, 2 a usage error.`

class UsageError extends Error {}

/** A rules file or trace that cannot be used: the start-up message, after the file's name. */
class InvalidFile extends Error {
  constructor(file: string, cause: Error) {
    super(`${file}: ${cause.message}`, { cause })
  }
}

/**
 * Runs the `tollgate` command on its arguments (without `node` and the script) and returns its exit
 * code (`EXIT`). The `bin` passes the process's; a tool or test passes its own `io`.
 * @example
 * const code = runCli(['check', 'rules.yaml'], {
 *   readFile: (path) => readFileSync(path, 'utf8'),
 *   writeFile: (path, text) => writeFileSync(path, text),
 *   out: (line) => console.log(line),
 *   err: (line) => console.error(line),
 * })
 */
export function runCli(argv: readonly string[], io: CliIo): number {
  const [command, ...rest] = argv
  try {
    if (command === 'check') return check(rest, io)
    if (command === 'simulate') return simulateCommand(rest, io)
    if (command === 'scenarios') return listScenarios(io)
    if (command === 'help' || command === '--help' || command === '-h') {
      io.out(USAGE)
      return EXIT.ok
    }
    throw new UsageError(
      command === undefined ? 'no command given' : `unknown command "${command}"`,
    )
  } catch (error) {
    if (error instanceof UsageError || isParseArgsError(error)) {
      io.err(`tollgate: ${(error as Error).message}`)
      io.err(USAGE)
      return EXIT.usage
    }
    if (error instanceof InvalidFile || isRateLimitError(error) || error instanceof TraceError) {
      io.err(error.message)
      return EXIT.invalid
    }
    throw error
  }
}

const identityOption = { identity: { type: 'string', multiple: true } } as const

function check(args: readonly string[], io: CliIo): number {
  const { values, positionals } = parseArgs({
    args: [...args],
    allowPositionals: true,
    options: { keys: { type: 'string' }, ...identityOption },
  })
  const file = onePositional(positionals, 'a rules file')
  const keys = wholeOption(values.keys, 'keys', 1_000_000)
  const rules = loadRules(file, values.identity, io)
  io.out(`${file}: ${rules.length} ${rules.length === 1 ? 'rule' : 'rules'}, valid`)
  io.out('')
  for (const line of table(rulesTableRows(ruleFacts(rules, keys)))) io.out(line)
  const notes = notesFor(rules)
  if (notes.length > 0) io.out('')
  for (const note of notes) io.out(note)
  return EXIT.ok
}

function notesFor(rules: readonly Rule[]): string[] {
  const notes: string[] = []
  const has = (name: string) => rules.some((rule) => rule.algorithm === name)
  if (has('fixed_window'))
    notes.push('fixed_window admits up to 2 × its limit across a window boundary.')
  if (has('sliding_log'))
    notes.push(
      'sliding_log keys hold one number per admitted unit: state/key is at the full limit.',
    )
  notes.push(
    'Rates are sustained rates; a rate rule also admits its burst at once. Memory is measured on the memory store, each key at its fullest.',
  )
  return notes
}

function simulateCommand(args: readonly string[], io: CliIo): number {
  const { values, positionals } = parseArgs({
    args: [...args],
    allowPositionals: true,
    options: {
      trace: { type: 'string' },
      scenario: { type: 'string' },
      svg: { type: 'string' },
      every: { type: 'string' },
      key: { type: 'string' },
      plan: { type: 'string' },
      method: { type: 'string' },
      path: { type: 'string' },
      ...identityOption,
    },
  })
  if (positionals.length > 1)
    throw new UsageError(`one rules file at most, got ${positionals.join(' ')}`)
  if ((values.trace === undefined) === (values.scenario === undefined)) {
    throw new UsageError('give --trace FILE or --scenario NAME (one of them)')
  }
  const scenario = values.scenario === undefined ? undefined : scenarioNamed(values.scenario)
  if (values.scenario !== undefined && scenario === undefined) {
    throw new UsageError(
      `no scenario "${values.scenario}" (scenarios: ${SCENARIOS.map((s) => s.name).join(', ')})`,
    )
  }
  const file = positionals[0]
  if (file === undefined && scenario === undefined)
    throw new UsageError('a trace needs a rules file')
  const lanes: readonly Lane[] =
    file === undefined
      ? scenario!.lanes
      : [{ label: file, rules: loadRules(file, values.identity, io) }]
  const given: Partial<Arrival> = strip({
    key: values.key,
    plan: values.plan,
    method: values.method,
    path: values.path,
  })
  const traced = values.trace === undefined ? scenario!.arrivals : readTrace(values.trace, io)
  const arrivals = traced.map((arrival) => ({ ...given, ...arrival }))
  const every =
    values.every === undefined ? scenario?.sampleEveryMs : wholeOption(values.every, 'every', 1)
  const window = scenario === undefined ? {} : { from: scenario.from, until: scenario.until }
  const runs = lanes.map((lane) => ({
    label: lane.label,
    simulation: simulate({
      rules: lane.rules,
      arrivals,
      customIdentities: values.identity,
      sampleEveryMs: every,
      ...window,
    }),
  }))
  if (scenario !== undefined) io.out(`${scenario.title}\n${scenario.caption}\n`)
  for (const run of runs) {
    for (const line of timelineLines(run.label, run.simulation)) io.out(line)
    for (const warning of run.simulation.warnings) io.err(warning)
    io.out('')
  }
  if (values.svg !== undefined) {
    const { from, until } = runs[0]!.simulation
    io.writeFile(values.svg, timelineSvg(runs, { from, until }))
    io.out(`wrote ${values.svg}`)
  }
  return EXIT.ok
}

function listScenarios(io: CliIo): number {
  for (const line of table(SCENARIOS.map((s) => [s.name, s.title]))) io.out(line)
  return EXIT.ok
}

/** Reads and validates a rules file as the limiter does at start-up, identities included. */
function loadRules(
  file: string,
  identities: readonly string[] | undefined,
  io: CliIo,
): readonly Rule[] {
  const format = formatOf(file, { '.json': 'json', '.yaml': 'yaml', '.yml': 'yaml' } as const)
  const text = read(file, io)
  try {
    const rules = loadRulesText(text, format)
    createLimiter({ rules, customIdentities: identities, logger: false })
    return rules
  } catch (error) {
    throw isRateLimitError(error) ? new InvalidFile(file, error) : error
  }
}

function readTrace(file: string, io: CliIo): Arrival[] {
  const format = formatOf(file, { '.csv': 'csv', '.jsonl': 'jsonl', '.ndjson': 'jsonl' } as const)
  const text = read(file, io)
  try {
    return parseTrace(text, format)
  } catch (error) {
    throw error instanceof TraceError ? new InvalidFile(file, error) : error
  }
}

function formatOf<F extends string>(file: string, formats: Record<string, F>): F {
  const extension = /\.[^./\\]+$/.exec(file)?.[0]?.toLowerCase() ?? ''
  const format = formats[extension]
  if (format === undefined) {
    throw new UsageError(`${file}: expected a file ending in ${Object.keys(formats).join(', ')}`)
  }
  return format
}

function read(file: string, io: CliIo): string {
  try {
    return io.readFile(file)
  } catch (error) {
    throw new UsageError(`cannot read ${file}: ${(error as Error).message}`)
  }
}

function onePositional(positionals: readonly string[], what: string): string {
  if (positionals.length !== 1)
    throw new UsageError(
      `expected ${what}, got ${positionals.length === 0 ? 'none' : positionals.join(' ')}`,
    )
  return positionals[0]!
}

function wholeOption(value: string | undefined, name: string, fallback: number): number {
  if (value === undefined) return fallback
  const parsed = Number(value.replace(/_/g, ''))
  if (!Number.isSafeInteger(parsed) || parsed < 1) {
    throw new UsageError(`--${name}: expected a whole number ≥ 1, got ${value}`)
  }
  return parsed
}

function isParseArgsError(error: unknown): boolean {
  const code = (error as { code?: unknown })?.code
  return typeof code === 'string' && code.startsWith('ERR_PARSE_ARGS')
}

function strip<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>
}
