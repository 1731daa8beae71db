import {
  type Charge,
  checkCost,
  checkMethods,
  checkOneOf,
  checkTime,
  type Decision,
  invalidOption,
  type Outcome,
  RateLimitError,
  refuseUnknownOptions,
  type Settlement,
  type Store,
  shown,
  wholeMs,
} from '@tollgate/core/store'
import { consumeAcross } from './across-objects.js'
import { recipeOf } from './algorithm-recipe.js'
import { readReply } from './reply.js'
import { OBJECT_URL, type ObjectRequest, type WireCharge } from './wire.js'

/** The parts of a Durable Object stub the store uses. */
export type LimiterStub = {
  /** Sends one request's charges of one key to its object. */
  fetch(input: string, init: { method: string; body: string }): Promise<Response>
}

/** The parts of a Durable Object namespace binding (`env.LIMITER`) the store uses. */
export type LimiterNamespace<Id> = {
  /** The id of a key's object: one object per key (with the `prefix`). */
  idFromName(name: string): Id
  /** The stub to reach that object. */
  get(id: Id): LimiterStub
}

export type DurableObjectStoreOptions = {
  /**
   * Put before every key to name its object. Give each app (or limiter) that binds one namespace
   * its own, so that rules of the same id in two apps never share a key's state.
   * @default ''
   */
  readonly prefix?: string
  /**
   * Whose clock decides. `'object'`: the object's own, so Workers in places whose clocks
   * disagree all count a key on one clock (as the Redis store uses Redis `TIME`). `'caller'`:
   * the `now` the limiter passes; tests inject time this way.
   * @default 'object'
   */
  readonly time?: 'object' | 'caller'
}

/** What sends one request to one key's object and reads its answer. */
export type SendToObject = (
  key: string,
  request: ObjectRequest,
) => Promise<{ decisions: Decision[]; at: number }>

const WHERE = 'durableObjectStore()'

/**
 * A store that keeps each key's state in a Durable Object of its own (`TollgateLimiter`, which
 * the app exports), named by the key: one exact limit for every Worker in the world, decided by
 * core's algorithms, with one subrequest per decision when a request's rules share one identity.
 * An object that cannot be reached fails the call with `ERR_RL_STORE_UNAVAILABLE`, and each
 * rule's `onStoreError` decides.
 * @example
 * rateLimit(rules, { store: (c) => durableObjectStore(c.env.LIMITER) })
 */
export function durableObjectStore<Id>(
  namespace: LimiterNamespace<Id>,
  options: DurableObjectStoreOptions = {},
): Store {
  checkMethods('namespace', namespace, ['idFromName', 'get'], 'a Durable Object namespace', WHERE)
  refuseUnknownOptions(options, ['prefix', 'time'], WHERE)
  const prefix = options.prefix ?? ''
  if (typeof prefix !== 'string') {
    throw invalidOption('prefix', `expected a string, got ${shown(prefix)}`, WHERE)
  }
  const callerTime = checkOneOf('time', options.time ?? 'object', ['object', 'caller'], WHERE)
  const stamped = callerTime === 'caller'

  const send: SendToObject = async (key, request) => {
    let body: unknown
    try {
      // JSON of the key: a name that tells every key apart (lone surrogates included).
      const stub = namespace.get(namespace.idFromName(prefix + JSON.stringify(key)))
      const response = await stub.fetch(OBJECT_URL, {
        method: 'POST',
        body: JSON.stringify(request),
      })
      if (!response.ok) throw new Error(`HTTP ${response.status}: ${await response.text()}`)
      body = await response.json()
    } catch (cause) {
      throw new RateLimitError(
        'ERR_RL_STORE_UNAVAILABLE',
        `${WHERE}: the limiter object did not answer (${String(cause)})`,
        { cause },
      )
    }
    return readReply(body, request.op === 'consume' || request.look ? request.charges.length : 0)
  }

  /** The request's time: the caller's, checked, or none (the object reads its clock). */
  const timeOf = (now: number): { now?: number } => {
    if (!stamped) return {}
    now = wholeMs(now)
    checkTime(now)
    return { now }
  }

  return {
    shared: true,
    async consume(charges, now): Promise<Outcome> {
      const time = timeOf(now)
      // Every charge is checked before any object is asked.
      const wire = charges.map(toWire)
      for (const { cost, algorithm } of charges) checkCost(cost, algorithm.limit)
      const groups = byKey(charges)
      if (groups.size === 0) return { decisions: [], at: time.now ?? wholeMs(now) }
      if (groups.size === 1) {
        return send(charges[0]!.key, { op: 'consume', charges: wire, ...time })
      }
      return consumeAcross(groups, charges, wire, time, send)
    },
    async refund(charges, chargedAt, now) {
      await giveBack('refund', charges.map(toWire), charges, chargedAt, now)
    },
    async settle(settlements: readonly Settlement[], chargedAt, now) {
      const wire = settlements.map((s) => ({ ...toWire(s), actual: s.actual }))
      await giveBack('settle', wire, settlements, chargedAt, now)
    },
  }

  /** Refunds or settles charges, each key's in its object, all at once. */
  async function giveBack(
    op: 'refund' | 'settle',
    wire: readonly WireCharge[],
    charges: readonly Charge[],
    chargedAt: number,
    now: number,
  ): Promise<void> {
    const time = timeOf(now)
    chargedAt = wholeMs(chargedAt)
    checkTime(chargedAt)
    const groups = byKey(charges)
    await Promise.all(
      [...groups].map(([key, indices]) =>
        send(key, { op, charges: indices.map((i) => wire[i]!), chargedAt, ...time }),
      ),
    )
  }
}

function toWire(charge: Charge): WireCharge {
  checkCost(charge.cost)
  const { rule, key, cost, shadow } = charge
  return { rule, key, cost, shadow, algorithm: recipeOf(charge.algorithm, rule) }
}

/** The indices of the charges of each key, in order: each key's object decides its own. */
function byKey(charges: readonly Charge[]): Map<string, number[]> {
  const groups = new Map<string, number[]>()
  for (const [i, { key }] of charges.entries()) {
    const group = groups.get(key)
    if (group === undefined) groups.set(key, [i])
    else group.push(i)
  }
  return groups
}
