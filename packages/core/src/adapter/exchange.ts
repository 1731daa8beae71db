import type { HeaderEntries } from '../headers/types.js'
import type { RequestIdentities } from '../identity/identities.js'
import type {
  Limiter,
  MaybePromise,
  RequestFacts,
  RulesUpdate,
  Verdict,
  WaitSignal,
} from '../limiter/types.js'
import type { Denial, Responder } from '../response/responder.js'
import type { RuleConfig } from '../rules/types.js'
import type { WebResponseEnd } from '../web-response-end.js'
import type { KitOptions } from './options.js'
import type { ResponseMeter } from './response-meter.js'
import type { Shedder } from './shed.js'
import { giveBack } from './slots.js'
import type { FieldSink, Framework } from './types.js'

// A request's way through a middleware, after the kit has been built: read, decided, answered
// and ended.

/** What a middleware shares with every `Exchange` it makes. */
export type Shared<Req> = {
  readonly limiter: Limiter
  readonly responder: Responder
  readonly onShadowDenied: ((verdict: Verdict, req: Req) => void) | undefined
  readonly ownAnswer: boolean
  readonly refundIf: ((status: number, req: Req) => boolean) | undefined
  /** True when a rule may hold a slot in flight, given back when the exchange ends. */
  readonly releasesSlots: boolean
  /**
   * The load shedder (`shed`), if any: `refuse` before the rules; `over` hears, once, each
   * exchange that is over (answered, ended, aborted, refused), when it counts requests in flight.
   */
  readonly shedder: Shedder<Req> | undefined
  readonly debugHeader: ((verdict: Verdict) => string | undefined) | undefined
}

/** The development-only explanation field (see `debugHeader` in `@tollgate/core/observe`). */
const DEBUG = 'Tollgate-Debug'

/**
 * One request on its way through a middleware, from decision to response end. The adapter
 * waits for `ready`, writes the fields (`writeFields`), then continues (`denial` undefined) or
 * answers with `denial`, and reports how the exchange ended: `end(status)` once the response is
 * known, `abort()` when the client went away first. Only the first of the two counts, so what is
 * held for the request (a refundable charge) is given back exactly once. A request queued by a
 * queue rule is held in `ready` until its slot, and one a concurrency rule with a `queue`
 * refused until a slot frees (or its wait is over: then it is denied); if its client goes away
 * meanwhile, it is dropped: its charges are given back (a waiter for a slot holds none) and
 * `ready` never settles, so the adapter neither continues nor answers.
 */
export class Exchange<Req, Res> {
  /** This exchange once decided: itself when the store answered synchronously, else a promise. */
  declare ready: Exchange<Req, Res> | Promise<Exchange<Req, Res>>
  /** Set when the request is refused: the adapter answers with it instead of continuing. */
  declare denial: Denial | undefined
  /** The fields a denial's answer carries (without `Content-Type` when the app answers). */
  declare denialFields: HeaderEntries | undefined
  /** The limiter's verdict, for the app's hooks; undefined for a request refused outright. */
  declare verdict: Verdict | undefined
  /** True once ended, aborted, or dropped: nothing after counts. */
  declare private over: boolean
  /** Where the limiter hears that the client of a queued request went away; asked once. */
  declare waitSignal: WaitSignal | undefined
  declare private readonly shared: Shared<Req>
  declare readonly req: Req
  declare readonly res: Res

  // Fields are declared and set here rather than given initial values: one constructor per
  // request, no separate initializer.
  constructor(shared: Shared<Req>, req: Req, res: Res) {
    this.shared = shared
    this.req = req
    this.res = res
    this.ready = this
    this.denial = undefined
    this.denialFields = undefined
    this.verdict = undefined
    this.over = false
    this.waitSignal = undefined
  }

  /**
   * Takes the limiter's verdict: a denial gets the response the responder builds for it. Called
   * once, by the kit.
   */
  decided(verdict: Verdict): this {
    const shared = this.shared
    this.verdict = verdict
    if (!verdict.allowed) {
      // When it is served: at its decision, or a queued one at its slot.
      this.deny(shared.responder.respond(verdict, verdict.at + (verdict.waitMs ?? 0)) as Denial)
    }
    // Heard only when a shadow rule would have denied (the part's guard asks).
    shared.onShadowDenied?.(verdict, this.req)
    return this
  }

  /**
   * The limiter refused the request outright or failed: an error the client must hear about (a
   * cost that can never fit) is answered; a queued request whose client went away is dropped (a
   * promise that never settles: nothing is left to answer); anything else is the framework's.
   */
  refuse(error: unknown): this | Promise<never> {
    this.close()
    if (this.waitSignal?.aborted) return new Promise<never>(() => {})
    const response = this.shared.responder.respondToError(error)
    if (response === undefined) throw error
    this.deny(response as Denial)
    return this
  }

  /** Answers with `denial`: nothing is held, and nothing is in flight any more. */
  deny(denial: Denial): this {
    const shared = this.shared
    this.denial = denial
    this.close()
    // An app that answers a denial itself (onLimited) gets all its fields but Content-Type, which
    // labels the default problem body and would mislabel the app's own (Express's res.json and
    // Koa keep a Content-Type already set).
    const fields = shared.ownAnswer
      ? denial.headers.filter(([name]) => name !== 'Content-Type')
      : denial.headers
    const explained = this.verdict && shared.debugHeader?.(this.verdict)
    // Denials are answered from their fields by every adapter: the explanation goes there.
    this.denialFields = explained ? [...fields, [DEBUG, explained]] : fields
    return this
  }

  /** Writes the request's rate-limit fields (a denial's, or an admission's) through `sink`. */
  writeFields<Target>(sink: FieldSink<Target>, target: Target): void {
    if (this.denial !== undefined) {
      sink.putEntries(target, this.denialFields!)
      return
    }
    const verdict = this.verdict!
    sink.putVerdict(target, verdict, this.shared.responder.writeFields)
    const explained = this.shared.debugHeader?.(verdict)
    if (explained) sink.putEntries(target, [[DEBUG, explained]])
  }

  /**
   * The response is known (sent, or about to be): gives the charge back if the app's `refund`
   * says so, and what an admitted request holds in flight (none for a denial: nothing was
   * taken). Returns the pending work of an asynchronous store, for runtimes where background
   * work must be handed over (`waitUntil`). Without a status, the client went away (`abort`).
   * Nothing after the first `end` or `abort` counts.
   */
  end(status?: number): Promise<void> | undefined {
    if (this.over) return undefined
    this.close()
    const verdict = this.verdict
    if (verdict === undefined || this.denial !== undefined) return undefined
    const { limiter, releasesSlots, refundIf } = this.shared
    const released = releasesSlots ? giveBack(limiter, verdict, true) : undefined
    const refunded =
      status !== undefined && refundIf?.(status, this.req) ? giveBack(limiter, verdict) : undefined
    // Both pending only for a request that held slots and is refunded.
    return released && refunded
      ? Promise.all([released, refunded]).then(() => {})
      : (released ?? refunded)
  }

  /** The client went away before the response ended: slots are given back, nothing refunded. */
  abort(): void {
    void this.end()
  }

  /**
   * Over (answered, ended, aborted, refused, or failed before deciding): nothing after counts,
   * and a load shedder counting requests in flight hears it, once.
   */
  private close(): void {
    if (this.over) return
    this.over = true
    this.shared.shedder?.over?.(this)
  }
}

/** The kit's `enter`: reads a request, decides it and hands back its exchange. */
export function requestEntry<Req, Res>(
  shared: Shared<Req>,
  framework: Framework<Req>,
  options: KitOptions<Req, Res>,
  identities: RequestIdentities<Req>,
  readsUser: boolean,
): AdapterKit<Req, Res>['enter'] {
  const { limiter, shedder } = shared
  const { skip, plan, identities: ownIdentities, estimate } = options
  // The user is not read at all when no rule keys on it: finding no `req.user` walks the
  // request's whole prototype chain, on every request.
  const user = readsUser ? (options.user ?? framework.user) : undefined
  return function enter(req, res) {
    if (skip?.(req, res)) return undefined
    const method = framework.method(req)
    const path = framework.path(req)
    const resolved = identities(req, framework.socketAddress(req), user?.(req))
    const facts: RequestFacts = {
      method,
      path,
      plan: plan?.(req),
      identities: ownIdentities === undefined ? resolved : { ...resolved, ...ownIdentities(req) },
    }
    const exchange = new Exchange(shared, req, res)
    const shed = shedder?.refuse(req, method, path)
    if (shed !== undefined) return exchange.deny(shed)
    let verdict: MaybePromise<Verdict>
    try {
      verdict = limiter.decide(facts, estimate && { estimate: estimate(req) })
    } catch (error) {
      // Answered or thrown: only a request held for its turn can be dropped, and none is yet.
      exchange.refuse(error)
      return exchange
    }
    // Not `isPromise`: one call fewer on the path of every request.
    if (typeof (verdict as Partial<Promise<Verdict>>).then !== 'function') {
      const decided = verdict as Verdict
      if (decided.waitMs === undefined && decided.waitsForSlot !== true) {
        // Most requests: admitted at once, with no shadow rule refusing. Nothing else to do.
        if (decided.allowed && decided.shadowDenied.length === 0) {
          exchange.verdict = decided
          return exchange
        }
        return exchange.decided(decided)
      }
    }
    // A store answering later, a queued admission, or a refusal waiting for a slot: the last
    // two are held until their turn.
    exchange.ready = Promise.resolve(verdict)
      .then((decided) => {
        if (decided.waitMs === undefined && decided.waitsForSlot !== true) {
          return exchange.decided(decided)
        }
        // Where the limiter hears that the client went away; kept to tell a drop from a failure.
        const signal = framework.disconnected?.(req)
        exchange.waitSignal = signal
        return limiter.hold(decided, { signal }).then((served) => exchange.decided(served))
      })
      .then(undefined, (error: unknown) => exchange.refuse(error))
    return exchange
  }
}

/** True for a promise (or any thenable): the store answered asynchronously. */
export function isPromise<T>(value: MaybePromise<T>): value is Promise<T> {
  return typeof (value as { then?: unknown } | undefined)?.then === 'function'
}

/** One per middleware: decides its requests and hands each back as an `Exchange`. */
export type AdapterKit<Req, Res> = {
  /**
   * Starts a request: `undefined` when `skip` says so (continue, nothing counted), else its
   * `Exchange`, already decided when the store is synchronous. A hook that throws, or an error that
   * is not the client's to hear, is thrown (or rejects `ready`) for the framework to handle.
   */
  readonly enter: (req: Req, res: Res) => Exchange<Req, Res> | undefined
  /**
   * True when the adapter must report how admitted exchanges end (`end`, `abort`): refunds are
   * configured, or a rule holds slots in flight (`releasesSlots`).
   */
  readonly watchesEnd: boolean
  /**
   * True when a rule holds slots until the response is over: the adapter then ends the exchange
   * when the last byte is sent (a streamed body included), on a handler's error, and aborts it
   * when the client goes away first, so each slot is given back exactly once.
   */
  readonly releasesSlots: boolean
  /**
   * Set when a rule holds slots (`releasesSlots`): how a fetch runtime's adapter follows the
   * response to its end (`abortOnSignal` on the request's signal, `endWhenSent` on the response
   * it returns). Carried by the concurrency algorithm, so that a middleware composed without it
   * bundles none of it.
   */
  readonly responseEnd: WebResponseEnd | undefined
  /** Every field this middleware may put on a response (e.g. to keep them on an error's). */
  readonly fieldNames: readonly string[]
  /**
   * What its denials and fields are made by: for an adapter that writes a denial's fields itself
   * (`singleValuedNames`).
   */
  readonly responder: Responder
  /**
   * Set when the middleware settles reservations from responses (its `settle` option): a meter
   * for an admitted exchange, which the adapter feeds as the response goes out (`head`, each
   * piece of the body, then `end` or `abort`); undefined for a denial.
   */
  readonly meter: ((exchange: Exchange<Req, Res>) => ResponseMeter | undefined) | undefined
  /**
   * Changes the middleware's rules while running (`limiter.update`), refusing a rule the kit
   * was not made to serve (an identity it does not read, a concurrency rule in a middleware
   * made without one). Adapters expose it as the middleware's `update`.
   */
  readonly update: (rules: readonly RuleConfig[]) => MaybePromise<RulesUpdate>
}

/** A middleware that can change its rules while running: see `AdapterKit.update`. */
export type Updatable<Middleware> = Middleware & {
  /**
   * Changes the rules while running: validated as at start-up, refused whole when wrong (the
   * error thrown, logged and counted, the running rules kept); each changed rule's keys carry
   * their state by its `onChange`. See docs/concepts/changing-rules-while-running.md.
   * @example app.post('/admin/rules', (req, res) => res.json(limit.update(req.body.rules)))
   */
  readonly update: (rules: readonly RuleConfig[]) => MaybePromise<RulesUpdate>
}

/** The middleware with its kit's `update`: the one line every adapter adds. */
export function withUpdate<Middleware extends object>(
  middleware: Middleware,
  kit: { readonly update: Updatable<Middleware>['update'] },
): Updatable<Middleware> {
  return Object.assign(middleware, { update: kit.update })
}
