import { randomBytes } from 'node:crypto'
import { loadShiplaneRules } from '../rules.js'
import { type Exchange, send } from './client.js'
import { describeRules } from './describe-rules.js'
import { forkGateway, type GatewayHandle, startLocalGateway } from './gateways.js'
import { deleteKeys } from './redis-keys.js'
import { playResourceScenario, RESOURCE_NOTES } from './resource.js'
import { type Moment, SCENARIOS, type Scenario } from './scenarios.js'
import { clockTime, formatTable, headerRow, tally, timelineRows } from './timeline.js'
import { workedFigures } from './worked-figures.js'

/** The demo's t = 0: 12:00:00 UTC, as in the specification's figures. */
export const DEMO_START = Date.UTC(2026, 9, 2, 12, 0, 0)

export type DemoOptions = {
  /** Run two gateway processes on this Redis instead of one gateway on the memory store. */
  readonly redisUrl?: string | undefined
  readonly print: (line: string) => void
}

/** What each scenario's moments got back, for checking. */
export type DemoResult = ReadonlyMap<Scenario['id'], readonly (readonly Exchange[])[]>

/**
 * Starts the Shiplane gateway, plays the specification's scenarios against it over HTTP with
 * simulated time, prints the timeline, and stops everything it started.
 */
export async function runDemo({ redisUrl, print }: DemoOptions): Promise<DemoResult> {
  const rules = loadShiplaneRules()
  const prefix = `shiplane-demo:${process.pid}:${randomBytes(4).toString('hex')}`
  const gateways: GatewayHandle[] = []
  const results = new Map<Scenario['id'], Exchange[][]>()
  try {
    if (redisUrl === undefined) {
      gateways.push(await startLocalGateway('A', rules, undefined))
    } else {
      gateways.push(...(await Promise.all(['A', 'B'].map((n) => forkGateway(n, redisUrl, prefix)))))
    }
    printIntro(print, rules, redisUrl, prefix)
    const next = roundRobin(gateways)
    for (const scenario of SCENARIOS) {
      results.set(scenario.id, await play(scenario, gateways, next, print))
    }
    print('')
    for (const note of RESOURCE_NOTES) print(note)
    await playResourceScenario(DEMO_START + 7 * 60_000, print)
  } finally {
    await Promise.all(gateways.map((gateway) => gateway.close()))
    if (redisUrl !== undefined) await deleteKeys(redisUrl, prefix)
  }
  printOutro(print, results, redisUrl)
  return results
}

function printIntro(
  print: (line: string) => void,
  rules: Parameters<typeof describeRules>[0],
  redisUrl: string | undefined,
  prefix: string,
): void {
  print(
    'Shiplane gateway: Express + @tollgate/express, rules from examples/shiplane-gateway/rules.yaml',
  )
  for (const line of formatTable(describeRules(rules), '  ')) print(line)
  if (redisUrl === undefined) {
    print('Store: memory (in the gateway process).')
  } else {
    print(`Store: Redis at ${redisUrl}, keys under ${prefix}: (deleted at the end).`)
    print('Two gateway processes, A and B, share it; requests alternate between them.')
  }
  print(
    `Time is simulated: the gateway reads an injected clock, which starts at ${new Date(DEMO_START).toISOString().replace('.000Z', 'Z')}.`,
  )
  print('Requests reach the gateway through a load balancer on loopback, which appends the')
  print("client's address to X-Forwarded-For.")
}

function roundRobin(gateways: readonly GatewayHandle[]): () => GatewayHandle {
  let i = 0
  return () => gateways[i++ % gateways.length]!
}

async function play(
  scenario: Scenario,
  gateways: readonly GatewayHandle[],
  next: () => GatewayHandle,
  print: (line: string) => void,
): Promise<Exchange[][]> {
  print('')
  print(scenario.title)
  for (const note of scenario.notes) print(`  ${note}`)
  const showGateway = gateways.length > 1
  const rows: string[][] = [headerRow(showGateway)]
  const moments: Exchange[][] = []
  for (const moment of scenario.moments) {
    const at = DEMO_START + moment.at
    await Promise.all(gateways.map((gateway) => gateway.setTime(at)))
    const exchanges: Exchange[] = []
    // One after another, so the timeline reads in the order the gateway decided.
    for (const request of moment.requests) exchanges.push(await send(next(), request, at))
    moments.push(exchanges)
    rows.push(...timelineRows(exchanges, showGateway))
  }
  for (const line of formatTable(rows, '  ')) print(line)
  const policy = moments.flat().find((e) => e.policy !== undefined)?.policy
  if (policy !== undefined) print(`  RateLimit-Policy: ${policy}`)
  const denial = moments.flat().find((e) => e.status === 429)
  if (denial !== undefined) print(`  429 body, detail: ${detailOf(denial.body)}`)
  for (const [i, exchanges] of moments.entries()) {
    const moment = scenario.moments[i]!
    if (exchanges.length >= TALLY_FROM || moment.label !== undefined) {
      print(`  ${label(moment)}: ${tally(exchanges, showGateway)}`)
    }
  }
  return moments
}

/** Moments of this many requests or more get a count line; the spec's burst moments always do. */
const TALLY_FROM = 3

function label(moment: Moment): string {
  return moment.label ?? clockTime(DEMO_START + moment.at)
}

/** The problem body's `detail`, the sentence a client developer reads. */
function detailOf(body: string): string {
  try {
    const detail = (JSON.parse(body) as { detail?: unknown }).detail
    return typeof detail === 'string' ? detail : body
  } catch {
    return body
  }
}

function printOutro(
  print: (line: string) => void,
  results: ReadonlyMap<Scenario['id'], readonly (readonly Exchange[])[]>,
  redisUrl: string | undefined,
): void {
  const burst = results.get('free-burst')?.[0] ?? []
  const admitted = burst.filter((e) => e.status < 400)
  print('')
  if (redisUrl === undefined) {
    print(`The burst at t = 0: ${admitted.length} of ${burst.length} admitted.`)
    print('Run it on Redis, with two gateway processes sharing the limit:')
    print('  REDIS_URL=redis://127.0.0.1:6379 pnpm demo')
  } else {
    const byGateway = (name: string) => admitted.filter((e) => e.gateway === name).length
    print(
      `The burst at t = 0 across both gateways: ${admitted.length} of ${burst.length} admitted (A ${byGateway('A')}, B ${byGateway('B')}).`,
    )
    print('One limit in Redis, not one per process (which would have admitted 40).')
  }
  print('')
  print("The specification's figures, computed by the algorithms directly (times in exact ms):")
  for (const line of workedFigures()) print(line === '' ? '' : `  ${line}`)
}
