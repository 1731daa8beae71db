/**
 * Resource protection: Shiplane's slow shipment report, held to two at once by a concurrency
 * rule with a line of one, then load shedding while the event loop stalls. The stall is an
 * injected delay signal and the waits run on the demo's simulated clock, so every run prints
 * the same timeline.
 */
import type { AddressInfo } from 'node:net'
import { createLimiter, loadShedder, type RuleConfig, rateLimit } from '@tollgate/express'
import express from 'express'
import { simulatedTime, until } from './sim-time.js'
import { clockTime, formatTable } from './timeline.js'

export const REPORTS_RULE = {
  id: 'reports-at-once',
  description: 'Shipment reports hold a database connection each: two at once, one waits',
  match: { route: 'GET /v1/reports/*' },
  algorithm: 'concurrency',
  limit: 2,
  queue: 1,
  maxWait: '2s',
} as const satisfies RuleConfig

/** What one report request got back, at which simulated times. */
type Answer = {
  readonly id: string
  readonly path: string
  readonly sent: number
  readonly answered: number
  readonly status: number
  readonly retryAfter: string | undefined
  readonly started: number | undefined
}

/** The scenario's title and what to look for. */
export const RESOURCE_NOTES = [
  'Resource protection: the slow report endpoint, then load shedding under a stalled event loop',
  '  reports-at-once: concurrency, 2 at once for the whole gateway, a line of 1, max wait 2 s.',
  '  A report holds its slot until its response ends; a freed slot goes to the one in line.',
  '  Then the event-loop delay signal (injected: no real stall) reads 250 ms, above the 100 ms',
  '  bound: work is shed with 503 until it reads 20 ms again; /health, critical, is still served.',
  '  Slots live in the gateway process (the memory store), whichever store the rules above use.',
]

/** Plays the scenario on a gateway of its own, from `start` (ms since the epoch). */
export async function playResourceScenario(start: number, print: (line: string) => void) {
  const time = simulatedTime(start)
  let delayMs = 20
  const limiter = createLimiter({
    rules: [REPORTS_RULE],
    clock: time.clock,
    timers: time.timers,
    logger: false,
  })
  const started = new Map<string, number>()
  const finish = new Map<string, () => void>()
  const app = express()
  app.use(
    rateLimit(limiter, {
      clock: time.clock,
      logger: false,
      shed: loadShedder({
        maxEventLoopDelayMs: 100,
        eventLoopDelay: () => delayMs,
        sampleEveryMs: 100,
        critical: ['/health'],
      }),
    }),
  )
  app.get('/health', (_req, res) => {
    res.json({ status: 'up' })
  })
  app.get('/v1/reports/:id', async (req, res) => {
    started.set(req.params.id, time.now())
    await new Promise<void>((resolve) => finish.set(req.params.id, resolve))
    res.json({ report: req.params.id })
  })
  const server = app.listen(0, '127.0.0.1')
  await new Promise<void>((resolve) => server.once('listening', resolve))
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  const answers: Answer[] = []
  const send = (id: string, path = `/v1/reports/${id}`) => {
    const sent = time.now()
    return fetch(`${origin}${path}`).then(async (response) => {
      await response.text()
      const answer: Answer = {
        id,
        path,
        sent,
        answered: time.now(),
        status: response.status,
        retryAfter: response.headers.get('retry-after') ?? undefined,
        started: started.get(id),
      }
      answers.push(answer)
      return answer
    })
  }
  const at = (ms: number) => time.advanceTo(start + ms)
  const done = (id: string) => finish.get(id)!()
  const waiting = () => until(() => time.armed() === 1)
  const held = async () => {
    const decision = await limiter.check('*', REPORTS_RULE.id, { cost: 0 })
    return decision.limit - decision.remaining
  }
  try {
    // Four reports at once: two run, one waits in line, the fourth finds the line full.
    const [r1, r2, r3] = ['r1', 'r2', 'r3'].map((id) => send(id))
    await until(() => started.size === 2)
    await waiting()
    await send('r4')
    at(1000)
    done('r1')
    await r1
    await until(() => started.has('r3'))
    at(1500)
    const r5 = send('r5')
    await waiting()
    at(3500)
    await r5
    at(4000)
    done('r2')
    done('r3')
    await Promise.all([r2, r3])
    const afterReports = await held()
    // The event loop stalls: the injected delay signal reads 250 ms at the next sample.
    at(5000)
    delayMs = 250
    await send('r6')
    await send('health', '/health')
    at(5500)
    delayMs = 20
    const r7 = send('r7')
    await until(() => started.has('r7'))
    done('r7')
    await r7
    printTimeline(print, answers, afterReports)
    return { answers, held: afterReports }
  } finally {
    server.closeAllConnections()
    await new Promise<void>((resolve) => server.close(() => resolve()))
  }
}

function printTimeline(
  print: (line: string) => void,
  answers: readonly Answer[],
  held: number,
): void {
  const rows = [['sent', 'request', 'status', 'answered', 'Retry-After', 'what happened']]
  const ordered = [...answers].sort((a, b) => a.sent - b.sent || a.id.localeCompare(b.id))
  for (const answer of ordered) {
    rows.push([
      clockTime(answer.sent),
      `GET ${answer.path}`,
      String(answer.status),
      clockTime(answer.answered),
      answer.retryAfter ?? '-',
      whatHappened(answer),
    ])
  }
  for (const line of formatTable(rows, '  ')) print(line)
  print(`  Slots in use once the reports are done: ${held} (each given back exactly once).`)
}

function whatHappened(answer: Answer): string {
  const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`
  if (answer.status === 503) return 'shed: the event loop is stalled (temporary-reduced-capacity)'
  if (answer.path === '/health') return 'served during the stall: a critical route'
  if (answer.status === 429) {
    return answer.answered === answer.sent
      ? 'refused at once: two running, the line of one is full'
      : `waited ${seconds(answer.answered - answer.sent)} in line, no slot came: refused`
  }
  const waited = (answer.started ?? answer.sent) - answer.sent
  const took = answer.answered - (answer.started ?? answer.sent)
  if (took === 0) return 'served: the delay signal is back under the bound'
  const ran = `ran ${seconds(took)}`
  return waited === 0 ? `${ran} at once` : `waited ${seconds(waited)} for a slot, then ${ran}`
}
