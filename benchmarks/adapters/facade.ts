/**
 * The express-rate-limit facade beside express-rate-limit itself: CPU per request each adds to
 * a bare Express app, in-process with one request in flight, the three variants interleaved in
 * the same run (see measure.ts). Both get the same options (its memory store, draft-8 RateLimit
 * fields and X-RateLimit-*), so both send the same headers. Each run is a fresh process; the
 * ratio is reported per run, then its median and spread.
 *
 *   pnpm --filter @tollgate/benchmarks bench:adapters -- --facade --runs=3 --clients=1,100000
 * (bench:adapters runs it after its tables; --facade runs it alone)
 */
import { fork } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import facade from '@tollgate/express-rate-limit'
import type { RequestHandler } from 'express'
import { LIMIT, WINDOW_MS } from './config.js'
import { addedOverBare, measureRounds, median, type Send } from './measure.js'
import { expressAppWith, expressPeer, expressSenderTo } from './targets/express.js'

const args = new Map(
  process.argv.slice(2).map((arg) => {
    const [name, value] = arg.replace(/^--/, '').split('=')
    return [name!, value ?? 'true'] as const
  }),
)

/** One run, in this process: µs added per request by each limiter. */
async function measureOnce(clients: number, rounds: number, perRound: number) {
  const handlers: Record<string, RequestHandler | undefined> = {
    bare: undefined,
    'express-rate-limit': expressPeer('draft-8'),
    facade: facade({
      windowMs: WINDOW_MS,
      limit: LIMIT,
      standardHeaders: 'draft-8',
      legacyHeaders: true,
    }),
  }
  const variants = Object.entries(handlers).map(([name, handler]) => ({
    name,
    send: expressSenderTo(expressAppWith(handler), clients) as Send,
  }))
  const samples = await measureRounds(variants, { warmup: 5000, rounds, perRound })
  return {
    peer: addedOverBare(samples, 'bare', 'express-rate-limit'),
    facade: addedOverBare(samples, 'bare', 'facade'),
  }
}

if (process.argv[2] === '--child') {
  const [clients, rounds, perRound] = process.argv.slice(3).map(Number)
  process.send!(await measureOnce(clients!, rounds!, perRound!))
  process.disconnect()
} else {
  const runs = Number(args.get('runs') ?? 3)
  const rounds = Number(args.get('rounds') ?? 41)
  const perRound = Number(args.get('requests') ?? 500)
  const clientCounts = (args.get('clients') ?? '1,100000').split(',').map(Number)
  const file = fileURLToPath(import.meta.url)
  for (const clients of clientCounts) {
    const ratios: number[] = []
    for (let run = 0; run < runs; run++) {
      const child = fork(file, ['--child', String(clients), String(rounds), String(perRound)], {
        execArgv: process.execArgv,
        stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      })
      const result = await new Promise<{ peer: number; facade: number }>((resolve, reject) => {
        child.once('message', (m) => resolve(m as { peer: number; facade: number }))
        child.once('error', reject)
      })
      ratios.push(result.facade / result.peer)
      console.log(
        `clients=${clients} run ${run + 1}: express-rate-limit +${result.peer.toFixed(1)} µs, facade +${result.facade.toFixed(1)} µs, ratio ${(result.facade / result.peer).toFixed(2)}`,
      )
    }
    const spread = `${Math.min(...ratios).toFixed(2)}–${Math.max(...ratios).toFixed(2)}`
    console.log(
      `clients=${clients}: facade ÷ express-rate-limit median ${median(ratios).toFixed(2)} (runs: ${spread})`,
    )
  }
}
