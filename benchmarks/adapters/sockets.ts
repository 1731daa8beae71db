import { type ChildProcess, fork } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import autocannon from 'autocannon'
import type { VariantName } from './config.js'
import { median } from './measure.js'

const SOCKET_VARIANTS: readonly VariantName[] = ['bare', 'naive', 'tollgate', 'peer']
const ROUNDS = 3

export type SocketResult = {
  readonly variant: VariantName
  readonly requestsPerSecond: number
  /** The server process's CPU µs per request (user + system), load generator excluded. */
  readonly cpuPerRequest: number
}

type Server = { readonly child: ChildProcess; readonly url: string }

function reply<T>(child: ChildProcess, key: string): Promise<T> {
  return new Promise((resolve) => {
    const onMessage = (message: Record<string, T>) => {
      if (key in message) {
        child.off('message', onMessage)
        resolve(message[key]!)
      }
    }
    child.on('message', onMessage)
  })
}

async function start(framework: string, variant: VariantName): Promise<Server> {
  const child = fork(fileURLToPath(new URL('./server.ts', import.meta.url)), [framework, variant], {
    execArgv: process.execArgv,
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  })
  const port = await reply<number>(child, 'port')
  return { child, url: `http://127.0.0.1:${port}/` }
}

async function cpuOf(server: Server): Promise<number> {
  const cpu = reply<number>(server.child, 'cpu')
  server.child.send('cpu')
  return cpu
}

/** Every variant of one framework, each in its own server process, rounds interleaved. */
export async function measureSockets(framework: string, seconds: number): Promise<SocketResult[]> {
  const servers = new Map<VariantName, Server>()
  for (const variant of SOCKET_VARIANTS) servers.set(variant, await start(framework, variant))
  const samples = new Map(
    SOCKET_VARIANTS.map((v) => [v, { rps: [] as number[], cpu: [] as number[] }]),
  )
  try {
    for (const server of servers.values())
      await autocannon({ url: server.url, connections: 1, duration: 1 })
    for (let round = 0; round < ROUNDS; round++) {
      for (const variant of SOCKET_VARIANTS) {
        const server = servers.get(variant)!
        const before = await cpuOf(server)
        const result = await autocannon({
          url: server.url,
          connections: 1,
          pipelining: 1,
          duration: seconds,
        })
        const used = (await cpuOf(server)) - before
        if (result.non2xx > 0 || result.errors > 0)
          throw new Error(`${framework} ${variant}: failed requests`)
        samples.get(variant)!.rps.push(result.requests.average)
        samples.get(variant)!.cpu.push(used / result.requests.total)
      }
    }
  } finally {
    for (const server of servers.values()) server.child.send('exit')
  }
  return SOCKET_VARIANTS.map((variant) => ({
    variant,
    requestsPerSecond: median(samples.get(variant)!.rps),
    cpuPerRequest: median(samples.get(variant)!.cpu),
  }))
}
