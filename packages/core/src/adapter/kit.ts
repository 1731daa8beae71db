import { type Clock, systemClock } from '../clock.js'
import type { WriteVerdictFields } from '../headers/families.js'
import type { HeaderAccessor, HeaderEntries } from '../headers/types.js'
import { compileIdentities, type RequestIdentities, type UserId } from '../identity/identities.js'
import { createLimiter } from '../limiter/create-limiter.js'
import type { Limiter, MaybePromise, RequestFacts, Verdict, WaitSignal } from '../limiter/types.js'
import { FOREIGN_OPTIONS } from '../options/foreign-options.js'
import { invalidOption } from '../options/option-values.js'
import { fieldsForOwnAnswer } from '../response/problem.js'
import { createResponder, type Denial, type Responder } from '../response/responder.js'
import type { RuleConfig } from '../rules/types.js'
import { createWarnOnce, type WarnOnce } from '../warnings.js'
import { firstRequest, kitMade, secondRequest } from './creation-watch.js'
import { checkFramework, type FrameworkName } from './framework-shape.js'
import {
  checkAdapterOptions,
  type KitOptions,
  limiterOptionsOf,
  refundPredicate,
} from './options.js'
import { guardShadowDeniedHook } from './shadow-hook.js'
import type { LoadShedder, Shedder } from './shed.js'
import { bothPending, refundQuietly, releaseQuietly, releasesSlots } from './slots.js'

export type { WriteVerdictFields } from '../headers/families.js'
export type { KitOptions } from './options.js'

/**
 * How the kit reads one framework's request (Express's `req`, Koa's `ctx`, Hono's `c`): plain
 * functions, given once per middleware and called on every request, so keep them to a property
 * read or two.
 */
export type Framework<Req> = {
  /**
   * The framework whose requests these are: on its first request, the kit refuses one that
   * looks like another's (`ERR_RL_WRONG_FRAMEWORK`, naming the adapter to import).
   * @default none: not checked
   */
  readonly name?: FrameworkName | undefined
  readonly method: (req: Req) => string
  /** The full path the router dispatches on (a query string is dropped by the limiter). */
  readonly path: (req: Req) => string
  /** The socket peer's address; forwarding headers are the kit's to trust (`trustProxy`). */
  readonly socketAddress: (req: Req) => string | undefined
  /**
   * One request header by its lower-case name (see `HeaderAccessor`). Asked only for the
   * headers the rules and options need: the API key's, the forwarding header behind trusted
   * proxies, and now and then the forwarding headers that no proxy is trusted with (to warn).
   */
  readonly header: (req: Req, name: string) => ReturnType<HeaderAccessor>
  /**
   * The runtime's event-loop delay signal, made on first use (Node adapters:
   * `eventLoopDelay` from `@tollgate/core/node`), for `shed.maxEventLoopDelayMs`. @default none
   */
  readonly eventLoopDelay?: (() => () => number) | undefined
  /** Where the framework's auth middleware leaves the user, when the app gives no `user` hook. */
  readonly user: (req: Req) => UserId
  /** Options of the adapter's own that must be functions when given (e.g. `getConnInfo`). */
  readonly hooks?: readonly string[] | undefined
  /**
   * True when the request's header list may have been cut (on Node, `headerListMayBeCut` from
   * `@tollgate/core/node`): its forwarding headers are then not trusted. Asked only while a
   * proxy is trusted. @default never
   */
  readonly headersCut?: ((req: Req) => boolean) | undefined
  /**
   * A signal that aborts when the client goes away, asked for only when a request waits in a
   * queue (on Node, `closeSignal(res)` from `@tollgate/core/node`; on fetch runtimes the
   * request's own `signal`): the request is then dropped from the queue and its slot given back.
   * @default never told: a queued request whose client left is still served at its slot
   */
  readonly disconnected?: ((req: Req) => WaitSignal | undefined) | undefined
}

/**
 * Puts fields on a framework's response with its own API; one per middleware. `Target` is what
 * the fields go on (a Node response, a Hono context).
 */
export type FieldSink<Target> = {
  /**
   * Writes fields in order: a list field already set gets the value appended, `Content-Type` is
   * replaced, and single-valued rate-limit fields another Tollgate middleware set are merged as
   * `mergeFields` says.
   */
  putEntries(target: Target, entries: HeaderEntries): void
  /**
   * Writes an admitted request's fields as `putEntries` would, with no entries built: `write`
   * calls the writer once per field, synchronously (the fast path most requests take).
   */
  putVerdict(target: Target, verdict: Verdict, write: WriteVerdictFields): void
}

/** What a middleware shares with every `Exchange` it makes. */
type Shared<Req> = {
  readonly limiter: Limiter
  readonly responder: Responder
  readonly onShadowDenied: ((verdict: Verdict, req: Req) => void) | undefined
  readonly ownAnswer: boolean
  readonly refundIf: ((status: number, req: Req) => boolean) | undefined
  readonly disconnected: ((req: Req) => WaitSignal | undefined) | undefined
  /** True when a rule may hold a slot in flight, given back when the exchange ends. */
  readonly releases: boolean
  /** The load shedder, when it counts requests in flight (their end is then reported). */
  readonly inFlight: Shedder<Req> | undefined
  readonly debugHeader: ((verdict: Verdict) => string | undefined) | undefined
}

/** The development-only explanation field (see `debugHeader` in `@tollgate/core/observe`). */
const DEBUG = 'Tollgate-Debug'

const OPEN = 0
const ENDED = 1
const ABORTED = 2

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
  declare private state: number
  declare private waitSignal: WaitSignal | undefined
  /** True while the shedder counts this request in flight. */
  declare private counted: boolean
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
    this.state = OPEN
    this.waitSignal = undefined
    this.counted = false
  }

  /** Where the limiter hears that the client of a queued request went away; asked once. */
  signal(): WaitSignal | undefined {
    this.waitSignal ??= this.shared.disconnected?.(this.req)
    return this.waitSignal
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
      const at = verdict.waitMs === undefined ? verdict.at : verdict.at + verdict.waitMs
      this.deny(shared.responder.respond(verdict, at) as Denial)
    }
    if (shared.onShadowDenied !== undefined && verdict.shadowDenied.length > 0)
      shared.onShadowDenied(verdict, this.req)
    return this
  }

  /**
   * The limiter refused the request outright or failed: an error the client must hear about (a
   * cost that can never fit) is answered; a queued request whose client went away is dropped (a
   * promise that never settles: nothing is left to answer); anything else is the framework's.
   */
  refuse(error: unknown): this | Promise<never> {
    this.uncount()
    if (this.waitSignal?.aborted === true) {
      this.state = ABORTED
      return new Promise<never>(() => {})
    }
    const response = this.shared.responder.respondToError(error)
    if (response === undefined) throw error
    this.deny(response as Denial)
    return this
  }

  /** Answers with `denial`: nothing is held, and nothing is in flight any more. */
  deny(denial: Denial): this {
    this.uncount()
    const shared = this.shared
    this.denial = denial
    this.denialFields = shared.ownAnswer ? fieldsForOwnAnswer(denial.headers) : denial.headers
    const explained = this.verdict && shared.debugHeader?.(this.verdict)
    // Denials are answered from their fields by every adapter: the explanation goes there.
    if (explained) this.denialFields = [...this.denialFields, [DEBUG, explained]]
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
   * says so. Returns the pending refund of an asynchronous store, for runtimes where background
   * work must be handed over (`waitUntil`). Nothing after the first `end` or `abort` counts.
   */
  end(status: number): Promise<void> | undefined {
    if (this.state !== OPEN) return undefined
    this.state = ENDED
    this.uncount()
    const released = this.release()
    const { refundIf, limiter } = this.shared
    const verdict = this.verdict
    if (refundIf === undefined || verdict === undefined || this.denial !== undefined)
      return released
    const refunded = refundIf(status, this.req) ? refundQuietly(limiter, verdict) : undefined
    return bothPending(released, refunded)
  }

  /** The client went away before the response ended: slots are given back, nothing refunded. */
  abort(): void {
    if (this.state !== OPEN) return
    this.state = ABORTED
    this.uncount()
    void this.release()
  }

  /** Counts this request in flight until it ends, or is refused; called by the kit. */
  count(): void {
    this.counted = true
  }

  /** No longer in flight (ended, aborted, refused, or failed before deciding). */
  private uncount(): void {
    if (!this.counted) return
    this.counted = false
    this.shared.inFlight!.finished()
  }

  /** Gives back the slots an admitted request holds (none for a denial: nothing was taken). */
  private release(): Promise<void> | undefined {
    const verdict = this.verdict
    if (!this.shared.releases || verdict === undefined || this.denial !== undefined) return
    return releaseQuietly(this.shared.limiter, verdict)
  }
}

/** One per middleware: decides its requests and hands each back as a `Exchange`. */
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
  /** Every field this middleware may put on a response (e.g. to keep them on an error's). */
  readonly fieldNames: readonly string[]
}

const SILENT = { warn() {} }

/**
 * Builds a middleware's kit from the rules (or a limiter of the app's own), the options and the
 * framework's descriptor: the limiter, the identities it reads and the responder, with every rule
 * and option checked here, at start-up.
 * @example
 * const kit = createAdapterKit(rules, options, {
 *   method: (req) => req.method, path: (req) => req.url,
 *   socketAddress: (req) => req.socket.remoteAddress, header: (req, name) => req.headers[name],
 *   user: () => undefined,
 * })
 */
export function createAdapterKit<Req, Res>(
  rules: readonly RuleConfig[] | Limiter,
  options: KitOptions<Req, Res>,
  framework: Framework<Req>,
): AdapterKit<Req, Res> {
  checkAdapterOptions(options, framework.hooks ?? [], FOREIGN_OPTIONS)
  const own = isLimiter(rules)
  const logger = options.logger === false ? SILENT : options.logger
  const limiter = own ? rules : createLimiter({ ...limiterOptionsOf(options), rules, logger })
  const responder = createResponder(options)
  // A limiter of the app's own may read any identity; one built here reads only its rules'.
  const keysOn = (identity: string) =>
    own || limiter.rules.some((rule) => rule.match.identity.includes(identity))
  const identities = compileIdentities(options, framework.header, {
    apiKey: keysOn('api_key'),
    headersCut: framework.headersCut,
  })
  const refundIf = refundPredicate(options.refund)
  const shedder = bindShedder(options.shed, options.clock ?? systemClock, framework.eventLoopDelay)
  const shared: Shared<Req> = {
    limiter,
    responder,
    onShadowDenied: guardShadowDeniedHook(options),
    ownAnswer: options.onLimited !== undefined,
    refundIf,
    disconnected: framework.disconnected,
    releases: releasesSlots(limiter),
    inFlight: shedder?.countsInFlight ? shedder : undefined,
    debugHeader: options.debugHeader,
  }
  const names = responder.headerNames
  const kit = {
    watchesEnd: refundIf !== undefined || shared.releases || shared.inFlight !== undefined,
    releasesSlots: shared.releases,
    fieldNames: options.exposeHeaders ? [...names, 'Access-Control-Expose-Headers'] : names,
    enter: entry(shared, framework, options, identities, shedder, keysOn('user')),
  }
  // A limiter of the app's own, or a store it gives, keeps state across kits: one made per
  // request still limits, so only kits on a memory store of their own are watched.
  const serial = own || options.store !== undefined ? 0 : kitMade()
  kit.enter = firstEntry(kit, framework.name, serial, options)
  return kit
}

/**
 * The kit's `enter` until its first requests are seen: checks, once, that the request is its
 * framework's and whether the kit was made for this one request (see `creation-watch.ts`),
 * then puts the plain `enter` back, so that later requests pay nothing for either.
 */
function firstEntry<Req, Res>(
  kit: { enter: AdapterKit<Req, Res>['enter'] },
  name: FrameworkName | undefined,
  serial: number,
  options: KitOptions<Req, Res>,
): AdapterKit<Req, Res>['enter'] {
  const enter = kit.enter
  const clock = options.clock ?? systemClock
  const warn: WarnOnce = (code, message) => createWarnOnce(options)(code, message)
  // Made in a request handler, a kit meets its request in the task that made it; an app's
  // middleware, set up before it serves, never does. A resolved promise tells the two apart
  // without a timer.
  let madeInThisTask = serial !== 0
  if (madeInThisTask) void Promise.resolve().then(() => (madeInThisTask = false))
  const second: AdapterKit<Req, Res>['enter'] = (req, res) => {
    secondRequest(true)
    kit.enter = enter
    return enter(req, res)
  }
  return function first(req, res) {
    // Thrown on every request until one is right: nothing on a wrong framework can work.
    if (name !== undefined) checkFramework(name, req)
    kit.enter = madeInThisTask && firstRequest(serial, nowOf(clock), warn) ? second : enter
    return enter(req, res)
  }
}

/** The clock's time, or NaN when it fails: a broken clock is the limiter's to report. */
function nowOf(clock: Clock): number {
  try {
    return clock.now()
  } catch {
    return Number.NaN
  }
}

/** The kit's `enter`: reads a request, decides it and hands back its exchange. */
function entry<Req, Res>(
  shared: Shared<Req>,
  framework: Framework<Req>,
  options: KitOptions<Req, Res>,
  identities: RequestIdentities<Req>,
  shedder: Shedder<Req> | undefined,
  readsUser: boolean,
): AdapterKit<Req, Res>['enter'] {
  const { limiter } = shared
  const { skip, plan, identities: ownIdentities } = options
  // The user is not read at all when no rule keys on it: finding no `req.user` walks the
  // request's whole prototype chain, on every request.
  const user = readsUser ? (options.user ?? framework.user) : undefined
  const hold = (exchange: Exchange<Req, Res>, verdict: Verdict) =>
    limiter.hold(verdict, { signal: exchange.signal() }).then((served) => exchange.decided(served))

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
    if (shedder !== undefined) {
      const shed = shedder.refuse(req, method, path)
      if (shed !== undefined) return exchange.deny(shed)
      if (shared.inFlight !== undefined) {
        shedder.started()
        exchange.count()
      }
    }
    let verdict: MaybePromise<Verdict>
    try {
      verdict = limiter.decide(facts)
    } catch (error) {
      const refused = exchange.refuse(error)
      if (refused === exchange) return exchange
      exchange.ready = refused as Promise<never>
      return exchange
    }
    // Not `isPromise`: one call fewer on the path of every request.
    if (typeof (verdict as Partial<Promise<Verdict>>).then !== 'function') {
      verdict = verdict as Verdict
      if (verdict.waitMs === undefined && verdict.waitsForSlot !== true) {
        // Most requests: admitted at once, with no shadow rule refusing. Nothing else to do.
        if (verdict.allowed && verdict.shadowDenied.length === 0) {
          exchange.verdict = verdict
          return exchange
        }
        return exchange.decided(verdict)
      }
      // A queued admission, or a refusal waiting for a slot: held until its turn.
      exchange.ready = hold(exchange, verdict).then(undefined, (error: unknown) =>
        exchange.refuse(error),
      )
      return exchange
    }
    exchange.ready = (verdict as Promise<Verdict>)
      .then((decided) =>
        decided.waitMs === undefined && decided.waitsForSlot !== true
          ? exchange.decided(decided)
          : hold(exchange, decided),
      )
      .then(undefined, (error: unknown) => exchange.refuse(error))
    return exchange
  }
}

/** The middleware's shedder, from what `loadShedder` returned (the only check on this path). */
function bindShedder<Req>(
  shed: LoadShedder<Req> | undefined,
  clock: Clock,
  runtimeDelay: (() => () => number) | undefined,
): Shedder<Req> | undefined {
  if (shed === undefined) return undefined
  if (typeof shed?.bind !== 'function') {
    throw invalidOption('shed', 'expected loadShedder({ ... })')
  }
  return shed.bind(clock, runtimeDelay)
}

function isLimiter(value: readonly RuleConfig[] | Limiter): value is Limiter {
  return !Array.isArray(value) && typeof (value as Limiter).decide === 'function'
}

/** True for a promise (or any thenable): the store answered asynchronously. */
export function isPromise<T>(value: MaybePromise<T>): value is Promise<T> {
  return typeof (value as { then?: unknown } | undefined)?.then === 'function'
}
