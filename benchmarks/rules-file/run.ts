/**
 * How long `loadRulesText` takes over a rules file with one large mapping: a rule whose
 * `cost_by_route` names 20,000 routes, as YAML and as the same document in JSON. Both should
 * grow linearly with the number of keys (the duplicate-key check included).
 * Run: pnpm --filter @tollgate/benchmarks bench:rules-file
 */
import { performance } from 'node:perf_hooks'
import { loadRulesText } from '@tollgate/core/rules-file'

const KEYS = [5_000, 10_000, 20_000]
const RUNS = 5

function document(keys: number) {
  const routes: Record<string, number> = {}
  for (let i = 0; i < keys; i++) routes[`GET /v1/resource-${i}`] = 1
  return {
    rules: [
      {
        id: 'priced',
        match: { identity: 'ip' },
        algorithm: 'token_bucket',
        rate_per_s: 10,
        burst: 20,
        cost_by_route: routes,
      },
    ],
  }
}

function yamlText(keys: number): string {
  const lines = ['rules:', '  - id: priced', '    match: { identity: ip }']
  lines.push(
    '    algorithm: token_bucket',
    '    rate_per_s: 10',
    '    burst: 20',
    '    cost_by_route:',
  )
  for (let i = 0; i < keys; i++) lines.push(`      "GET /v1/resource-${i}": 1`)
  return `${lines.join('\n')}\n`
}

function medianMs(load: () => unknown): number {
  const times: number[] = []
  for (let run = 0; run < RUNS; run++) {
    const start = performance.now()
    load()
    times.push(performance.now() - start)
  }
  return times.sort((a, b) => a - b)[Math.floor(RUNS / 2)]!
}

for (const keys of KEYS) {
  const yaml = yamlText(keys)
  const json = JSON.stringify(document(keys))
  const yamlMs = medianMs(() => loadRulesText(yaml, 'yaml'))
  const jsonMs = medianMs(() => loadRulesText(json, 'json'))
  console.log(
    `${keys} keys: yaml ${yamlMs.toFixed(0)} ms, json ${jsonMs.toFixed(0)} ms (median of ${RUNS})`,
  )
}
