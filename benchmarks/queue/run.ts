/**
 * `bench:queue`: what a queued request costs. By default CPU per queued request beside the peers
 * (cpu.ts); with `--memory`, the heap each waiting request holds, plain and with an
 * `AbortSignal`, each count measured in a process of its own (memory.ts), so that no earlier
 * measurement's garbage is counted.
 *
 *   pnpm --filter @tollgate/benchmarks bench:queue -- --runs=3
 *   pnpm --filter @tollgate/benchmarks bench:queue -- --memory [--counts=1000,10000,100000]
 */
import { fork } from 'node:child_process'
import { fileURLToPath } from 'node:url'

if (process.argv.includes('--memory')) {
  const option = process.argv.find((a) => a.startsWith('--counts='))?.split('=')[1]
  const counts = (option ?? '1000,10000,100000').split(',')
  const memory = fileURLToPath(new URL('./memory.ts', import.meta.url))
  for (const count of counts) {
    for (const signal of ['plain', 'signal']) {
      const child = fork(memory, [count, signal], { execArgv: process.execArgv, stdio: 'inherit' })
      const code = await new Promise<number | null>((resolve) => child.once('exit', resolve))
      if (code !== 0) throw new Error(`memory.ts ${count} ${signal} exited with ${code}`)
    }
  }
} else {
  await import('./cpu.js')
}
