import { type ChildProcess, fork } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import type { Scenario, WorkerConfig, WorkerMessage } from './worker.js'

/**
 * The gateways' lease time: long enough for a loaded machine; the kill test moves the caller's
 * clock past it instead of waiting.
 */
export const LEASE_MS = 60_000

const workerPath = fileURLToPath(new URL('./worker.ts', import.meta.url))

/** Gateway processes (real OS processes) sharing limits through one Redis or Redis Cluster. */
export type Gateways = {
  /** Runs a scenario in every process at once; returns each process's admitted count. */
  run(index: number): Promise<GatewayResult[]>
  /** SIGKILL to every gateway: they die holding whatever they hold. */
  kill(): Promise<void>
  close(): Promise<void>
}

export async function startGateways(
  count: number,
  base: Omit<WorkerConfig, 'client' | 'index'>,
): Promise<Gateways> {
  const children: ChildProcess[] = []
  const ready: Promise<void>[] = []
  for (let i = 0; i < count; i++) {
    // Half the gateways use ioredis, half node-redis: both clients share the same state.
    const config: WorkerConfig = {
      ...base,
      client: i % 2 === 0 ? 'ioredis' : 'node-redis',
      index: i,
    }
    const child = fork(workerPath, [JSON.stringify(config)], {
      execArgv: ['--conditions=@tollgate/source', '--import', 'tsx'],
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    })
    children.push(child)
    ready.push(
      new Promise((resolve, reject) => {
        child.once('error', reject)
        child.once('exit', (code) =>
          reject(new Error(`gateway ${i} exited (${code}) before ready`)),
        )
        child.on('message', (message: WorkerMessage) => {
          if ('ready' in message) resolve()
        })
      }),
    )
  }
  await Promise.all(ready)
  for (const child of children) child.removeAllListeners('exit')

  return {
    run(index) {
      const results = children.map(
        (child) =>
          new Promise<GatewayResult>((resolve) => {
            const listener = (message: WorkerMessage) => {
              if ('scenario' in message && message.scenario === index) {
                child.off('message', listener)
                resolve(message)
              }
            }
            child.on('message', listener)
          }),
      )
      for (const child of children) child.send({ go: index })
      return Promise.all(results)
    },
    async kill() {
      await Promise.all(
        children.map(
          (child) =>
            new Promise<void>((resolve) => {
              if (child.exitCode !== null || child.signalCode !== null) return resolve()
              child.once('exit', () => resolve())
              child.kill('SIGKILL')
            }),
        ),
      )
    },
    async close() {
      await Promise.all(
        children.map(
          (child) =>
            new Promise<void>((resolve) => {
              if (child.exitCode !== null || child.signalCode !== null) return resolve()
              const timer = setTimeout(() => child.kill('SIGKILL'), 5000)
              child.once('exit', () => {
                clearTimeout(timer)
                resolve()
              })
              child.send({ exit: true })
            }),
        ),
      )
    },
  }
}

/** What one gateway reports of a scenario: admitted requests, errors, queue delays. */
type GatewayResult = {
  readonly admitted: number
  readonly errors: number
  readonly delays: readonly number[]
  readonly mostHeld: number
}

export type { Scenario }
