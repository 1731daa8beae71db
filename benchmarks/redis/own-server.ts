// A redis-server of the benchmark's own: an empty server, persistence off, in a temp directory,
// stopped when the benchmark ends. A shared server keeps whatever scripts others have loaded
// (a test run leaves thousands), and every script a server holds grows the Lua heap its
// collector steps through on script calls: 6,700 held doubled the fixed cost of a call of any
// script on this machine (an empty one: 0.65 to 1.2 µs), so figures taken there would depend on
// what ran before.
import { type ChildProcess, execFileSync, spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

export type OwnServer = { readonly port: number; readonly url: string; stop(): void }

const running = new Set<OwnServer>()
// A benchmark that fails half-way must not leave servers behind.
process.once('exit', () => {
  for (const server of running) server.stop()
})

/** Starts redis-server on `port` (or a free one) with `extraArgs`; resolves once it answers PING. */
export async function startOwnServer(
  options: { readonly port?: number; readonly extraArgs?: readonly string[] } = {},
): Promise<OwnServer> {
  const port = options.port ?? (await freePort())
  const dir = mkdtempSync(join(tmpdir(), `tollgate-bench-redis-${port}-`))
  const child: ChildProcess = spawn(
    'redis-server',
    [
      ...['--port', String(port), '--bind', '127.0.0.1', '--dir', dir],
      ...['--save', '', '--appendonly', 'no', ...(options.extraArgs ?? [])],
    ],
    { stdio: 'ignore' },
  )
  const server: OwnServer = {
    port,
    url: `redis://127.0.0.1:${port}`,
    stop() {
      running.delete(server)
      child.kill('SIGKILL')
      rmSync(dir, { recursive: true, force: true })
    },
  }
  running.add(server)
  for (let i = 0; i < 100; i++) {
    try {
      execFileSync('redis-cli', ['-p', String(port), 'ping'], { stdio: 'ignore' })
      return server
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
  }
  server.stop()
  throw new Error(`redis-server on ${port} did not start`)
}

/**
 * The Redis a benchmark measures: `REDIS_URL` when set (a server of the user's choosing, as it
 * is), else a server of its own.
 */
export async function benchmarkRedis(): Promise<{ url: string; own: boolean; stop(): void }> {
  const given = process.env['REDIS_URL']
  if (given !== undefined && given !== '') return { url: given, own: false, stop() {} }
  const server = await startOwnServer()
  return { url: server.url, own: true, stop: () => server.stop() }
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer()
    probe.once('error', reject)
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address()
      probe.close(() =>
        typeof address === 'object' && address !== null
          ? resolve(address.port)
          : reject(new Error('no free port')),
      )
    })
  })
}
