import { gcra } from '@tollgate/core'
import type { Charge } from '@tollgate/core/store'
import { describe, expect, it } from 'vitest'
import { type IoredisLike, ioredisClient, nodeRedisClient } from './client.js'
import { redisStore } from './redis-store.js'

const rule = gcra({ rate: 10, periodMs: 1000, burst: 5 })
const request = (key: string): Charge[] => [
  { rule: 'r', algorithm: rule, key, cost: 1, shadow: false },
]
const allowed = (keys: number) => [
  1_800_000_000_000,
  ...Array.from({ length: keys }, () => [4, 100]).flat(),
]

/**
 * An ioredis double: commands on the client itself (which auto-pipelining would hold back) and
 * commands through a pipeline of their own, recorded apart. `noScript` answers the first EVALSHA
 * with NOSCRIPT, as ioredis reports an error inside a pipeline: in the command's result tuple.
 */
function fakeIoredis(options: { autoPipelining: boolean; noScript?: boolean }) {
  const direct: string[] = []
  const pipelined: string[][] = []
  let noScript = options.noScript === true
  const reply = (command: string, numKeys: number): [Error | null, unknown] => {
    if (command === 'evalsha' && noScript) {
      noScript = false
      return [new Error('NOSCRIPT No matching script. Please use EVAL.'), null]
    }
    return [null, allowed(numKeys)]
  }
  const client: IoredisLike = {
    options: { enableAutoPipelining: options.autoPipelining },
    isCluster: false,
    evalsha: async (_sha, numKeys) => {
      direct.push('evalsha')
      return allowed(numKeys)
    },
    eval: async (_source, numKeys) => {
      direct.push('eval')
      return allowed(numKeys)
    },
    pipeline() {
      const queued: [string, number][] = []
      const pipeline = {
        evalsha: (_sha: string, numKeys: number) => {
          queued.push(['evalsha', numKeys])
          return pipeline
        },
        eval: (_source: string, numKeys: number) => {
          queued.push(['eval', numKeys])
          return pipeline
        },
        exec: async () => {
          pipelined.push(queued.map(([command]) => command))
          return queued.map(([command, numKeys]) => reply(command, numKeys))
        },
      }
      return pipeline
    },
  }
  return { client, direct, pipelined }
}

describe('ioredisClient', () => {
  it('on an auto-pipelining client, sends each store call as a pipeline of its own, at once (no sendCommand)', async () => {
    const { client, direct, pipelined } = fakeIoredis({ autoPipelining: true })
    const adapted = ioredisClient(client)
    // The store's own batching decides; nothing waits for the end of the tick.
    expect(adapted.autoPipelining).toBeUndefined()
    const store = redisStore({ client: adapted, prefix: 'p' })
    const outcomes = await Promise.all(['a', 'b', 'c'].map((key) => store.consume(request(key), 0)))
    expect(direct).toEqual([])
    // The first request alone, the two made behind it together: two pipelines of one call each.
    expect(pipelined).toEqual([['evalsha'], ['evalsha']])
    for (const outcome of outcomes) {
      expect(outcome.decisions).toEqual([
        { allowed: true, remaining: 4, limit: 5, resetAfterMs: 100, retryAfterMs: undefined },
      ])
    }
  })

  it('reads a NOSCRIPT inside such a pipeline as the server error it is, and sends the source', async () => {
    const { client, pipelined } = fakeIoredis({ autoPipelining: true, noScript: true })
    const store = redisStore({ client: ioredisClient(client), prefix: 'p' })
    const outcome = await store.consume(request('a'), 0)
    expect(outcome.decisions[0]!.allowed).toBe(true)
    expect(pipelined).toEqual([['evalsha'], ['eval']])
    expect(store.scriptReloads).toBe(0)
    expect(store.scriptLoads).toBe(1)
  })

  it.each([true, false])(
    'on a single node, sends each call as ioredis builds it, with sendCommand, when it can (auto-pipelining: %s)',
    async (autoPipelining) => {
      // Shaped like ioredis: a pipeline's methods build a `Command` and hand it to the
      // pipeline's `sendCommand`; the client's `sendCommand` sends one as it is.
      class Command {
        readonly args: unknown[]
        constructor(
          readonly name: string,
          args: unknown[],
          readonly options: { keyPrefix?: string },
        ) {
          this.args = args.flat()
        }
      }
      const sent: Command[] = []
      let noScript = true
      const client: IoredisLike = {
        options: { enableAutoPipelining: autoPipelining, keyPrefix: 'app:' },
        evalsha: () => Promise.reject(new Error('held back by the auto-pipeline')),
        eval: () => Promise.reject(new Error('held back by the auto-pipeline')),
        pipeline() {
          const pipeline = {
            sendCommand: (_command: unknown): unknown => pipeline,
            evalsha: (...args: unknown[]) => pipeline.sendCommand(new Command('evalsha', args, {})),
            eval: (...args: unknown[]) => pipeline.sendCommand(new Command('eval', args, {})),
            exec: () => Promise.reject(new Error('not this way')),
          }
          return pipeline as never
        },
        async sendCommand(command) {
          const made = command as Command
          sent.push(made)
          if (made.name === 'evalsha' && noScript) {
            noScript = false
            throw new Error('NOSCRIPT No matching script. Please use EVAL.')
          }
          return allowed(Number(made.args[1]))
        },
      }
      const store = redisStore({ client: ioredisClient(client), prefix: 'p' })
      const outcome = await store.consume(request('a'), 0)
      expect(outcome.decisions[0]!.allowed).toBe(true)
      expect(sent.map((command) => [command.name, command.args.slice(1)])).toEqual([
        ['evalsha', [1, 'p:{a}', '1']],
        ['eval', [1, 'p:{a}', '1']],
      ])
      // The client's key prefix goes with each command, as ioredis's own methods pass it.
      expect(sent[0]!.options.keyPrefix).toBe('app:')
    },
  )

  it('without auto-pipelining, calls the client itself', async () => {
    const { client, direct, pipelined } = fakeIoredis({ autoPipelining: false })
    const store = redisStore({ client: ioredisClient(client), prefix: 'p' })
    await store.consume(request('a'), 0)
    expect(direct).toEqual(['evalsha'])
    expect(pipelined).toEqual([])
  })
})

describe('the error listener', () => {
  it('is added once per client, however many stores share the connection', async () => {
    const { Redis } = await import('ioredis')
    const { createClient } = await import('redis')
    const ioredis = new Redis({ lazyConnect: true })
    const nodeRedis = createClient()
    try {
      const before = {
        ioredis: ioredis.listenerCount('error'),
        nodeRedis: nodeRedis.listenerCount('error'),
      }
      // Past Node's limit of 10 listeners per event, which would print a leak warning.
      for (let i = 0; i < 12; i++) {
        redisStore({ client: ioredisClient(ioredis), prefix: `p${i}` })
        redisStore({ client: nodeRedisClient(nodeRedis), prefix: `p${i}` })
      }
      expect(ioredis.listenerCount('error')).toBe(before.ioredis + 1)
      expect(nodeRedis.listenerCount('error')).toBe(before.nodeRedis + 1)
      // Still heard: an error event with no listener of the app's own neither throws nor crashes.
      expect(() => ioredis.emit('error', new Error('down'))).not.toThrow()
      expect(() => nodeRedis.emit('error', new Error('down'))).not.toThrow()
    } finally {
      ioredis.disconnect()
    }
  })
})
