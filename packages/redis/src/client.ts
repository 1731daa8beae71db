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
  evalsha(sha: string, numKeys: number, ...keysAndArgs: string[]): Promise<unknown>
  eval(source: string, numKeys: number, ...keysAndArgs: string[]): Promise<unknown>
  /** `true` on `new Cluster(...)`, `false` on `new Redis(...)`. */
  readonly isCluster?: boolean
  /** The client's options, read for `enableAutoPipelining`. */
  readonly options?: { readonly enableAutoPipelining?: boolean }
  on?(event: 'error', listener: (error: unknown) => void): unknown
  /** A pipeline of its own (`redis.pipeline()`), which auto-pipelining does not hold back. */
  pipeline?(): IoredisPipeline
}

/** The part of an ioredis `Pipeline` the adapter uses. */
type IoredisPipeline = {
  evalsha(sha: string, numKeys: number, ...keysAndArgs: string[]): IoredisPipeline
  eval(source: string, numKeys: number, ...keysAndArgs: string[]): IoredisPipeline
  exec(): Promise<[error: Error | null, reply: unknown][] | null>
}

/**
 * Adapts an ioredis client, single node or Cluster (detected from `isCluster`). The client
 * keeps its own options: for rate limiting, `enableOfflineQueue: false` makes calls fail at once
 * while Redis is unreachable (the failure policy then decides) instead of queueing them.
 *
 * On a single node with `enableAutoPipelining`, each store call goes out as a pipeline of its
 * own, at once: ioredis sends one auto-pipeline at a time, so a call there would wait for the
 * end of the event-loop turn and then for the reply of the pipeline before it, where the store
 * already gathers its requests into one call per rule set (`coalesce`) and keeps several calls
 * on their way. The socket still carries the app's own auto-pipelined commands between them.
 *
 * Like `nodeRedisClient`, it listens to the client's `'error'` event, so that a Redis that is
 * down is never an unhandled `'error'` event (ioredis would print one per reconnection attempt);
 * the app's own listeners still run, and the store reports each failed call itself.
 * @example redisStore({ client: ioredisClient(new Redis(process.env.REDIS_URL)) })
 */
export function ioredisClient(client: IoredisLike): RedisScriptClient {
  client.on?.('error', ignore)
  const { pipeline } = client
  if (client.options?.enableAutoPipelining === true && client.isCluster !== true && pipeline) {
    return {
      cluster: false,
      evalsha: (sha, keys, args) =>
        onlyReply(pipeline.call(client).evalsha(sha, keys.length, ...keys, ...args)),
      eval: (source, keys, args) =>
        onlyReply(pipeline.call(client).eval(source, keys.length, ...keys, ...args)),
    }
  }
  return {
    cluster: client.isCluster === true,
    // ioredis Cluster auto-pipelines per node; the store sends each request alone there anyway.
    autoPipelining: client.options?.enableAutoPipelining === true,
    evalsha: (sha, keys, args) => client.evalsha(sha, keys.length, ...keys, ...args),
    eval: (source, keys, args) => client.eval(source, keys.length, ...keys, ...args),
  }
}

/** Runs a pipeline of one command: its reply, or its error (a `NOSCRIPT` among them) thrown. */
async function onlyReply(pipeline: IoredisPipeline): Promise<unknown> {
  const [error, reply] = (await pipeline.exec())?.[0] ?? [new Error('The pipeline ran nothing')]
  if (error) throw error
  return reply
}

type EvalOptions = { keys: string[]; arguments: string[] }

/** The part of a node-redis client (`createClient` or `createCluster`, v4 and later) used. */
export type NodeRedisLike = {
  evalSha(sha: string, options: EvalOptions): Promise<unknown>
  eval(source: string, options: EvalOptions): Promise<unknown>
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
  client.on?.('error', ignore)
  return {
    cluster: options.cluster ?? client.masters !== undefined,
    evalsha: (sha, keys, args) => client.evalSha(sha, { keys: [...keys], arguments: [...args] }),
    eval: (source, keys, args) => client.eval(source, { keys: [...keys], arguments: [...args] }),
  }
}

function ignore(): void {}
