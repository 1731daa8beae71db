import type { AddressInfo } from 'node:net'
import { manualClock } from '@tollgate/test-utils'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createApp } from './app.js'

const clock = manualClock(Date.UTC(2026, 0, 1))
const { app, report, shutdown } = createApp({ clock })
const server = app.listen(0, '127.0.0.1')
let base = ''

beforeAll(async () => {
  if (!server.listening) await new Promise((resolve) => server.once('listening', resolve))
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
})

afterAll(async () => {
  server.close()
  await shutdown()
})

/** A scrape's samples: `name{labels} value` lines, comments dropped. */
async function scrape(): Promise<string[]> {
  const response = await fetch(`${base}/metrics`)
  expect(response.status).toBe(200)
  expect(response.headers.get('content-type')).toContain('text/plain')
  return (await response.text()).split('\n').filter((line) => line !== '' && !line.startsWith('#'))
}

describe('the Prometheus example', () => {
  it('exports every decision, the shadow rule and the store over HTTP at /metrics', async () => {
    for (let i = 0; i < 22; i++) await fetch(`${base}/`)
    clock.advance(1000)
    for (let i = 0; i < 5; i++) await fetch(`${base}/login`, { method: 'POST' })
    const samples = await scrape()
    const sample = (name: string, labels: string) =>
      samples.find((line) => line.startsWith(`${name}{`) && line.includes(labels))
    // 20 admitted from the burst, 2 denied; a second later 10 more tokens: 5 logins admitted.
    expect(
      sample('tollgate_rate_limiting_decisions_total', 'tollgate_rate_limiting_outcome="admitted"'),
    ).toMatch(/tollgate_rate_limiting_rule="per-ip".* 25$/)
    expect(
      sample('tollgate_rate_limiting_decisions_total', 'tollgate_rate_limiting_outcome="denied"'),
    ).toMatch(/ 2$/)
    expect(sample('tollgate_rate_limiting_decisions_total', 'outcome="shadow-denied"')).toMatch(
      /tollgate_rate_limiting_rule="login-strict".* 2$/,
    )
    expect(sample('tollgate_shadow_heavy_hitter_count', 'tollgate_shadow_rank="1"')).toMatch(/ 2$/)
    // Histograms as the series of a classic Prometheus histogram: 25 admissions of per-ip, 3 of
    // them with 10 % of the burst left or less (2, 1 and 0 of 20: the dashboard's "near the limit").
    const ratio = (series: string) =>
      sample(`tollgate_rate_limiting_remaining_ratio_${series}`, 'rule="per-ip"')
    expect(ratio('count')).toMatch(/ 25$/)
    expect(
      samples.find(
        (line) =>
          line.startsWith('tollgate_rate_limiting_remaining_ratio_bucket{') &&
          line.includes('rule="per-ip"') &&
          line.includes('le="0.1"'),
      ),
    ).toMatch(/ 3$/)
    expect(samples.filter((line) => line.includes('_bucket_total'))).toEqual([])
    expect(samples.some((line) => line.startsWith('tollgate_memory_store_entries'))).toBe(true)
    // The client's address is in the process's own shadow report, never in the metrics.
    expect(report.readRule('login-strict')?.heaviest[0]?.key).toMatch(/^ip:/)
    expect(samples.filter((line) => line.includes('127.0.0.1'))).toEqual([])
  }, 60_000) // 27 requests over HTTP: minutes, not seconds, on a loaded machine
})
