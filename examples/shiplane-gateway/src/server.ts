/**
 * `pnpm start`: the Shiplane gateway on http://127.0.0.1:$PORT (default 3000), with the memory
 * store, or with Redis when REDIS_URL is set.
 *
 * `--demo-clock` is for the demo, which starts gateways as child processes: the gateway then
 * listens on an ephemeral port, tells its parent the port, and reads the time the parent sets
 * over the IPC channel instead of the wall clock.
 */
import type { AddressInfo } from 'node:net'
import { type Clock, systemClock } from '@tollgate/express'
import { type GatewayMessage, isSetTime } from './demo/messages.js'
import { createGateway } from './gateway.js'
import { loadShiplaneRules } from './rules.js'
import { openStore } from './store.js'

const demo = process.argv.includes('--demo-clock')
const prefixArg = process.argv.find((arg) => arg.startsWith('--redis-prefix='))
const { REDIS_URL: redisUrl, PORT } = process.env

function tell(message: GatewayMessage): void {
  process.send?.(message)
}

/** A clock the parent sets over IPC; it starts at 0 until the first `set-time`. */
function parentClock(): Clock {
  let now = 0
  process.on('message', (message) => {
    if (!isSetTime(message)) return
    now = message.now
    tell({ type: 'time-set', id: message.id })
  })
  return { now: () => now }
}

async function main(): Promise<void> {
  if (demo && process.send === undefined)
    throw new Error('--demo-clock needs an IPC channel (fork)')
  const rules = loadShiplaneRules()
  const { store, description, close } = await openStore(
    redisUrl === undefined
      ? undefined
      : {
          url: redisUrl,
          prefix: prefixArg?.slice('--redis-prefix='.length) ?? 'shiplane',
          time: demo ? 'caller' : 'server',
        },
  )
  const clock = demo ? parentClock() : systemClock
  const app = createGateway({ rules, store, clock })
  const port = demo ? 0 : Number(PORT ?? 3000)
  const server = app.listen(port, '127.0.0.1', () => {
    const { port } = server.address() as AddressInfo
    if (demo) tell({ type: 'listening', port })
    else console.log(`Shiplane gateway on http://127.0.0.1:${port} (${description} store)`)
  })
  const stop = () => {
    server.closeAllConnections()
    server.close(() => {
      close().finally(() => process.exit(0))
    })
  }
  process.once('SIGINT', stop)
  process.once('SIGTERM', stop)
  // A demo gateway ends with its parent.
  if (demo) process.once('disconnect', stop)
}

main().catch((error: unknown) => {
  const message = error instanceof Error ? error.message : String(error)
  if (demo) tell({ type: 'failed', message })
  console.error(`Shiplane gateway failed to start: ${message}`)
  process.exitCode = 1
  process.disconnect?.()
})
