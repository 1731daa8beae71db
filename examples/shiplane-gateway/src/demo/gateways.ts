import { type ChildProcess, fork } from 'node:child_process'
import type { AddressInfo } from 'node:net'
import { fileURLToPath } from 'node:url'
import type { Rule, Store } from '@tollgate/express'
import { createGateway } from '../gateway.js'
import type { GatewayMessage, SetTime } from './messages.js'

/** A running gateway the demo talks to over HTTP, and whose clock it sets. */
export type GatewayHandle = {
  /** `A`, `B`… as printed in the timeline. */
  readonly name: string
  readonly url: string
  /** Moves the gateway's clock to `now` (ms since the epoch) before the next requests. */
  setTime(now: number): Promise<void>
  close(): Promise<void>
}

/** The gateway in this process, on an ephemeral port, with a clock the demo sets directly. */
export async function startLocalGateway(
  name: string,
  rules: readonly Rule[],
  store: Store | undefined,
): Promise<GatewayHandle> {
  let now = 0
  const app = createGateway({ rules, store, clock: { now: () => now } })
  const server = app.listen(0, '127.0.0.1')
  await new Promise<void>((resolve, reject) => {
    server.once('listening', resolve)
    server.once('error', reject)
  })
  const { port } = server.address() as AddressInfo
  return {
    name,
    url: `http://127.0.0.1:${port}`,
    async setTime(time) {
      now = time
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}

const SERVER = fileURLToPath(new URL('../server.ts', import.meta.url))
const PACKAGE_DIR = fileURLToPath(new URL('../..', import.meta.url))

/**
 * The gateway as a child process (`src/server.ts --demo-clock`), on Redis at `redisUrl` under
 * `prefix`. Its clock is set over the IPC channel, and each `setTime` waits for the child's
 * acknowledgement, so no request can overtake a clock change.
 */
export async function forkGateway(
  name: string,
  redisUrl: string,
  prefix: string,
): Promise<GatewayHandle> {
  const child = fork(SERVER, ['--demo-clock', `--redis-prefix=${prefix}`], {
    cwd: PACKAGE_DIR,
    env: { ...process.env, REDIS_URL: redisUrl },
    execArgv: ['--conditions=@tollgate/source', '--import', 'tsx'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  })
  const port = await new Promise<number>((resolve, reject) => {
    child.on('message', (message: GatewayMessage) => {
      if (message.type === 'listening') resolve(message.port)
      if (message.type === 'failed') reject(new Error(`gateway ${name}: ${message.message}`))
    })
    child.once('exit', (code) => reject(new Error(`gateway ${name} exited with code ${code}`)))
  })
  let nextId = 0
  return {
    name,
    url: `http://127.0.0.1:${port}`,
    setTime: (now) => request(child, { type: 'set-time', id: nextId++, now }),
    close: () => stopChild(child),
  }
}

function request(child: ChildProcess, message: SetTime): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const onMessage = (reply: GatewayMessage) => {
      if (reply.type !== 'time-set' || reply.id !== message.id) return
      child.off('message', onMessage)
      resolve()
    }
    child.on('message', onMessage)
    child.send(message, (error) => {
      if (error) reject(error)
    })
  })
}

function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve()
  return new Promise<void>((resolve) => {
    child.once('exit', () => resolve())
    // The child closes its server and its Redis connection when the channel closes.
    child.disconnect()
  })
}
