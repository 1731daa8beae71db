/**
 * The narrow surface the store needs from a Redis client: run a cached script by SHA, run a
 * script by source (to recover from `NOSCRIPT`), and say whether it talks to a Redis Cluster.
 * `@tollgate/redis` depends on no client library; `ioredisClient` and `nodeRedisClient` adapt the
 * two common ones, and anything else (a proxy, a test double, another library) can implement
 * this in a few lines.
 */
export type RedisScriptClient = {
  /**
   * `EVALSHA sha numkeys ...keys ...args`. Must reject with the server's error when the script is
   * not cached (its message starts with `NOSCRIPT`).
   */
  evalsha(sha: string, keys: readonly string[], args: readonly string[]): Promise<unknown>
  /** `EVAL source numkeys ...keys ...args` (also caches the script on the node that runs it). */
  eval(source: string, keys: readonly string[], args: readonly string[]): Promise<unknown>
  /**
   * True for Redis Cluster: a call may then only use keys of one hash slot, and the store splits
   * requests whose keys span slots. A single server accepts any keys in one call.
   * @default false
   */
  readonly cluster?: boolean
  /**
   * True when the client holds the commands of a tick and sends them as one pipeline, one
   * pipeline at a time (an auto-pipelining client): a request sent alone would then take a
   * pipeline's round trip of its own, ahead of the requests made in the same tick, so the store
   * gathers them all into one call at the end of the tick instead. `ioredisClient` leaves it
   * unset: it sends the store's calls around ioredis's auto-pipeline (see there).
   * @default false
   */
  readonly autoPipelining?: boolean
}

/** The part of an ioredis `Redis` or `Cluster` instance the adapter uses (ioredis ≥ 5). */
export type IoredisLike = {
  /** ioredis's `evalsha`: runs a cached script. */
  evalsha(sha: string, numKeys: number, ...keysAndArgs: string[]): Promise<unknown>
  /** ioredis's `eval`: sends the script itself, after a `NOSCRIPT`. */
  eval(source: string, numKeys: number, ...keysAndArgs: string[]): Promise<unknown>
  /** `true` on `new Cluster(...)`, `false` on `new Redis(...)`. */
  readonly isCluster?: boolean
  /** The client's options, read for `enableAutoPipelining` and the `keyPrefix` it applies. */
  readonly options?: { readonly enableAutoPipelining?: boolean; readonly keyPrefix?: string }
  /**
   * Where the adapter listens for connection errors, so that an unheard one does not crash the
   * process.
   */
  on?(event: 'error', listener: (error: unknown) => void): unknown
  /** A pipeline of its own (`redis.pipeline()`), which auto-pipelining does not hold back. */
  pipeline?(): IoredisPipeline
  /**
   * Sends a command built with ioredis's `Command` as it is, outside any auto-pipeline; its
   * promise (typed `unknown` by ioredis).
   */
  sendCommand?(command: unknown): unknown
}

/** The part of an ioredis `Pipeline` the adapter uses. */
type IoredisPipeline = {
  evalsha(sha: string, numKeys: number, ...keysAndArgs: string[]): IoredisPipeline
  eval(source: string, numKeys: number, ...keysAndArgs: string[]): IoredisPipeline
  exec(): Promise<[error: Error | null, reply: unknown][] | null>
  /** Where a pipeline's command methods hand over each `Command` they build. */
  sendCommand?(command: unknown): unknown
}

/** ioredis's `Command` (`Redis.Command`): name, arguments (arrays are flattened), options. */
type IoredisCommand = new (
  name: string,
  args: readonly unknown[],
  options: { readonly replyEncoding: 'utf8'; readonly keyPrefix: string | undefined },
) => unknown

type ScriptSender = (
  command: 'evalsha' | 'eval',
  shaOrSource: string,
  keys: readonly string[],
  args: readonly string[],
) => Promise<unknown>

/**
 * Adapts an ioredis client, single node or Cluster (detected from `isCluster`). The client
 * keeps its own options: for rate limiting, `enableOfflineQueue: false` makes calls fail at once
 * while Redis is unreachable (the failure policy then decides) instead of queueing them.
 *
 * On a single node each store call is built as ioredis's own `evalsha` builds it and sent with
 * `sendCommand`, without the spread of its keys and arguments into a call. With
 * `enableAutoPipelining` that also keeps it outside the auto-pipeline (else in a pipeline of its
 * own), at once: ioredis sends one auto-pipeline at a time, so a call there would wait for the end of the event-loop turn and then for the reply of
 * the pipeline before it, where the store already gathers its requests into one call per rule
 * set (`coalesce`) and keeps several calls on their way. The socket still carries the app's own
 * auto-pipelined commands between them.
 *
 * Like `nodeRedisClient`, it listens to the client's `'error'` event, so that a Redis that is
 * down is never an unhandled `'error'` event (ioredis would print one per reconnection attempt);
 * the app's own listeners still run, and the store reports each failed call itself.
 * @example redisStore({ client: ioredisClient(new Redis(process.env.REDIS_URL)) })
 */
export function ioredisClient(client: IoredisLike): RedisScriptClient {
  listenToErrors(client)
  if (client.isCluster !== true) {
    const autoPipelining = client.options?.enableAutoPipelining === true
    const send = commandSender(client) ?? (autoPipelining ? pipelineSender(client) : undefined)
    if (send !== undefined) {
      return {
        cluster: false,
        evalsha: (sha, keys, args) => send('evalsha', sha, keys, args),
        eval: (source, keys, args) => send('eval', source, keys, args),
      }
    }
  }
  return {
    cluster: client.isCluster === true,
    // On a Cluster the store sends each request alone anyway; a single-node client without
    // `pipeline` that auto-pipelines gets the tick-end batching (see `autoPipelining`).
    autoPipelining: client.options?.enableAutoPipelining === true,
    evalsha: (sha, keys, args) => client.evalsha(sha, keys.length, ...keys, ...args),
    eval: (source, keys, args) => client.eval(source, keys.length, ...keys, ...args),
  }
}

/**
 * Sends each call with `sendCommand`: outside any auto-pipeline, with no pipeline around it
 * (about a quarter of the client's CPU per call less than a pipeline of one). ioredis's `Command`
 * is what `sendCommand` takes; the adapter depends on no ioredis module, so it takes the class
 * from a command a pipeline builds and never runs: a pipeline's methods hand each command they
 * make to its `sendCommand`, here one of the adapter's own. Undefined when that shape is not
 * there (another version, a test double): then `pipelineSender`.
 */
function commandSender(client: IoredisLike): ScriptSender | undefined {
  const { pipeline, sendCommand } = client
  if (pipeline === undefined || sendCommand === undefined) return undefined
  let Command: IoredisCommand | undefined
  try {
    const probe = pipeline.call(client)
    probe.sendCommand = (command: unknown) => {
      const made = (command as { constructor?: unknown } | null)?.constructor
      if (typeof made === 'function') Command = made as IoredisCommand
      return probe
    }
    probe.evalsha('0'.repeat(40), 0)
  } catch {
    return undefined
  }
  if (Command === undefined) return undefined
  const Made = Command
  // As ioredis's own `evalsha` builds it: text replies, the client's key prefix on the keys.
  const options = { replyEncoding: 'utf8', keyPrefix: client.options?.keyPrefix } as const
  return (command, shaOrSource, keys, args) =>
    sendCommand.call(
      client,
      new Made(command, [shaOrSource, keys.length, keys, args], options),
    ) as Promise<unknown>
}

/** Sends each call as a pipeline of one command of its own. */
function pipelineSender(client: IoredisLike): ScriptSender | undefined {
  const { pipeline } = client
  if (pipeline === undefined) return undefined
  return async (command, shaOrSource, keys, args) => {
    const calls = pipeline.call(client)
    const queued =
      command === 'evalsha'
        ? calls.evalsha(shaOrSource, keys.length, ...keys, ...args)
        : calls.eval(shaOrSource, keys.length, ...keys, ...args)
    // Its reply, or its error (a `NOSCRIPT` among them) thrown.
    const [error, reply] = (await queued.exec())?.[0] ?? [new Error('The pipeline ran nothing')]
    if (error) throw error
    return reply
  }
}

type EvalOptions = { keys: string[]; arguments: string[] }

/** The part of a node-redis client (`createClient` or `createCluster`, v4 and later) used. */
export type NodeRedisLike = {
  /** node-redis's `evalSha`: runs a cached script. */
  evalSha(sha: string, options: EvalOptions): Promise<unknown>
  /** node-redis's `eval`: sends the script itself, after a `NOSCRIPT`. */
  eval(source: string, options: EvalOptions): Promise<unknown>
  /**
   * Where the adapter listens for connection errors: node-redis throws on an `error` event nobody
   * listens to.
   */
  on?(event: 'error', listener: (error: unknown) => void): unknown
  /** Present on `createCluster` clients only. */
  readonly masters?: unknown
}

/**
 * Adapts a node-redis client, single node or cluster (`createCluster`, detected by its
 * `masters` list). node-redis throws on an `'error'` event nobody listens to, which would crash
 * the process when Redis goes away; the adapter therefore adds a listener that ignores the
 * event (the app's own listeners still run). The store reports failures itself, as
 * `ERR_RL_STORE_UNAVAILABLE` per call.
 * @example redisStore({ client: nodeRedisClient(await createClient({ url }).connect()) })
 */
export function nodeRedisClient(
  client: NodeRedisLike,
  options: { readonly cluster?: boolean } = {},
): RedisScriptClient {
  listenToErrors(client)
  return {
    cluster: options.cluster ?? client.masters !== undefined,
    evalsha: (sha, keys, args) => client.evalSha(sha, { keys: [...keys], arguments: [...args] }),
    eval: (source, keys, args) => client.eval(source, { keys: [...keys], arguments: [...args] }),
  }
}

/** Clients already given the listener: one connection often serves several stores. */
const listened = new WeakSet<object>()

/**
 * Adds the listener that keeps a client's `'error'` events from crashing the process (node-redis
 * throws on an event nobody hears) or from being printed unheard (ioredis), once per client: a
 * listener per adapted client would pass Node's limit of 10 on a connection shared by a few
 * stores, and print a memory-leak warning that is no leak.
 */
function listenToErrors(client: {
  on?(event: 'error', listener: (error: unknown) => void): unknown
}): void {
  if (client.on === undefined || listened.has(client)) return
  listened.add(client)
  client.on('error', ignore)
}

function ignore(): void {}
