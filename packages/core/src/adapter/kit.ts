import { type Clock, systemClock } from '../clock.js'
import { RateLimitError } from '../errors.js'
import type { FieldWriter, HeaderAccessor, HeaderEntries } from '../headers/types.js'
import { NO_PROXIES } from '../identity/no-proxies.js'
import { ReusedIdentitySource } from '../identity/reused-identity-source.js'
import { createLeanLimiter } from '../limiter/create-limiter.js'
import type { Limiter, RequestFacts, Verdict, WaitSignal } from '../limiter/types.js'
import { FOREIGN_OPTIONS, type ForeignOptions } from '../options/foreign-options.js'
import { fieldsForOwnAnswer } from '../response/problem.js'
import type { Denial } from '../response/responder.js'
import type { RuleConfig } from '../rules/types.js'
import {
  type CoreOptions,
  checkHooks,
  createTollgateWith,
  DEFAULT_PARTS,
  type EntryParts,
  type Handled,
  isHandled,
  isPromise,
  REQUEST_HOOKS,
  type RequestHooks,
  refundPredicate,
  refundQuietly,
  requestReaders,
  type UserId,
  type Waiter,
} from './middleware.js'
import { guardShadowDeniedHook } from './shadow-hook.js'
import type { LoadShedder, Shedder } from './shed.js'
import { bothPending, releaseQuietly, releasesSlots } from './slots.js'

/**
 * How the kit reads one framework's request (Express's `req`, Koa's `ctx`, Hono's `c`): plain
 * functions, given once per middleware and called on every request, so keep them to a property
 * read or two.
 */
export type Framework<Req> = {
  readonly method: (req: Req) => string
  /** The full path the router dispatches on (a query string is dropped by the limiter). */
  readonly path: (req: Req) => string
  /** The socket peer's address; forwarding headers are the kit's to trust (`trustProxy`). */
  readonly socketAddress: (req: Req) => string | undefined
  /** One request header by its lower-case name (see `HeaderAccessor`). */
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
   * `@tollgate/core/node`): its forwarding headers are then not trusted. @default never
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
 * The options the kit reads: core's, the request hooks, and whether the app answers denials
 * itself. `skip` is also handed the response, for frameworks that have one apart (Express).
 */
export type KitOptions<Req, Res> = CoreOptions &
  Omit<RequestHooks<Req>, 'skip'> & {
    readonly skip?: ((req: Req, res: Res) => boolean) | undefined
    /** Called by the adapter; the kit only leaves `Content-Type` off an app's own answer. */
    readonly onLimited?: unknown
  }

/** Writes an admitted verdict's fields to `writer`, one call per field. */
export type WriteVerdictFields = (verdict: Verdict, writer: FieldWriter) => void

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

/** What a middleware shares with every `Pass` it makes. */
type Shared<Req> = {
  readonly limiter: Limiter
  readonly writeVerdictFields: WriteVerdictFields
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
export class Pass<Req, Res> implements Waiter {
  /** This pass once decided: itself when the store answered synchronously, else a promise. */
  ready: Pass<Req, Res> | Promise<Pass<Req, Res>> = this
  /** Set when the request is refused: the adapter answers with it instead of continuing. */
  denial: Denial | undefined = undefined
  /** The fields a denial's answer carries (without `Content-Type` when the app answers). */
  denialFields: HeaderEntries | undefined = undefined
  /** The limiter's verdict, for the app's hooks; undefined for a request refused outright. */
  verdict: Verdict | undefined = undefined
  private response: Handled['response'] | undefined = undefined
  private state = OPEN
  private waitSignal: WaitSignal | undefined = undefined
  /** True while the shedder counts this request in flight. */
  private counted = false

  constructor(
    private readonly shared: Shared<Req>,
    readonly req: Req,
    readonly res: Res,
  ) {}

  /** Where the limiter hears that the client of a queued request went away; asked once. */
  signal(): WaitSignal | undefined {
    this.waitSignal ??= this.shared.disconnected?.(this.req)
    return this.waitSignal
  }

  /**
   * The decision failed: a queued request whose client went away is dropped (a promise that
   * never settles: nothing is left to answer); any other error is the framework's.
   */
  dropIfGone(error: unknown): Promise<never> {
    if (this.waitSignal?.aborted !== true) throw error
    this.state = ABORTED
    return new Promise<never>(() => {})
  }

  /** Counts this request in flight until it ends, or is refused; called by the kit. */
  count(): void {
    this.counted = true
  }

  /** No longer in flight (ended, aborted, refused, or failed before deciding). */
  uncount(): void {
    if (!this.counted) return
    this.counted = false
    this.shared.inFlight!.finished()
  }

  /** Takes the limiter's outcome; called once, by the kit. */
  settle(outcome: Verdict | Handled): this {
    const shared = this.shared
    // A lone verdict is an admission whose response was not built: its fields are written
    // straight from it.
    const verdict = isHandled(outcome) ? outcome.verdict : outcome
    this.verdict = verdict
    if (isHandled(outcome)) {
      const response = outcome.response
      this.response = response
      if (!response.allowed) {
        this.uncount()
        this.denial = response
        this.denialFields = shared.ownAnswer
          ? fieldsForOwnAnswer(response.headers)
          : response.headers
        const explained = verdict && shared.debugHeader?.(verdict)
        // Denials are answered from their fields by every adapter: the explanation goes there.
        if (explained) this.denialFields = [...this.denialFields, [DEBUG, explained]]
      }
    }
    if (
      verdict !== undefined &&
      shared.onShadowDenied !== undefined &&
      verdict.shadowDenied.length > 0
    )
      shared.onShadowDenied(verdict, this.req)
    return this
  }

  /** Writes the request's rate-limit fields (a denial's, or an admission's) through `sink`. */
  writeFields<Target>(sink: FieldSink<Target>, target: Target): void {
    const response = this.response
    if (response === undefined)
      sink.putVerdict(target, this.verdict!, this.shared.writeVerdictFields)
    else sink.putEntries(target, response.allowed ? response.headers : this.denialFields!)
    const explained = !this.denial && this.verdict && this.shared.debugHeader?.(this.verdict)
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

  /** Gives back the slots an admitted request holds (none for a denial: nothing was taken). */
  private release(): Promise<void> | undefined {
    const verdict = this.verdict
    if (!this.shared.releases || verdict === undefined || this.denial !== undefined) return
    return releaseQuietly(this.shared.limiter, verdict)
  }
}

/** One per middleware: decides its requests and hands each back as a `Pass`. */
export type AdapterKit<Req, Res> = {
  /**
   * Starts a request: `undefined` when `skip` says so (continue, nothing counted), else its
   * `Pass`, already decided when the store is synchronous. A hook that throws, or an error that
   * is not the client's to hear, is thrown (or rejects `ready`) for the framework to handle.
   */
  readonly enter: (req: Req, res: Res) => Pass<Req, Res> | undefined
  /**
   * True when the adapter must report how admitted passes end (`end`, `abort`): refunds are
   * configured, or a rule holds slots in flight (`releasesSlots`).
   */
  readonly watchesEnd: boolean
  /**
   * True when a rule holds slots until the response is over: the adapter then ends the pass
   * when the last byte is sent (a streamed body included), on a handler's error, and aborts it
   * when the client goes away first, so each slot is given back exactly once.
   */
  readonly releasesSlots: boolean
  /** Every field this middleware may put on a response (e.g. to keep them on an error's). */
  readonly fieldNames: readonly string[]
}

/**
 * Builds a middleware's kit: the limiter (or the app's own), the identity resolver and the
 * responder, with every rule and option checked here, at start-up.
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
  return kitWith(DEFAULT_PARTS, FOREIGN_OPTIONS, rules, options, framework)
}

/**
 * `createAdapterKit` for an adapter's lean entry (`@tollgate/hono/lean`): rules may name only
 * the algorithms in the `algorithms` option (required), so that a bundle holds no other; the
 * store defaults to `mapStore()`; an unknown option is refused with the closest known name but
 * without express-rate-limit's equivalents. A limiter given instead of rules is taken as it is.
 */
export function createLeanAdapterKit<Req, Res>(
  rules: readonly RuleConfig[] | Limiter,
  options: KitOptions<Req, Res>,
  framework: Framework<Req>,
): AdapterKit<Req, Res> {
  return kitWith(LEAN_PARTS, undefined, rules, options, framework)
}

/** The lean entries' parts: forwarding headers are read only with the app's `proxies`. */
const LEAN_PARTS: EntryParts = { makeLimiter: createLeanLimiter, proxies: NO_PROXIES }

function kitWith<Req, Res>(
  parts: EntryParts,
  foreign: ForeignOptions | undefined,
  rules: readonly RuleConfig[] | Limiter,
  options: KitOptions<Req, Res>,
  framework: Framework<Req>,
): AdapterKit<Req, Res> {
  const hooks = framework.hooks ? [...REQUEST_HOOKS, ...framework.hooks] : REQUEST_HOOKS
  checkHooks(options, hooks, foreign)
  const gate = createTollgateWith(rules, options, parts)
  const { requestIdentities } = gate
  const read = requestReaders(options, framework.user, gate)
  const headers = new ReusedIdentitySource<Req>(framework.header)
  const { skip } = options
  const refundIf = refundPredicate(options.refund)
  const shedder = bindShedder(options.shed, options.clock ?? systemClock, framework.eventLoopDelay)
  const shared: Shared<Req> = {
    limiter: gate.limiter,
    writeVerdictFields: gate.writeFields,
    onShadowDenied: guardShadowDeniedHook(options),
    ownAnswer: options.onLimited !== undefined,
    refundIf,
    disconnected: framework.disconnected,
    releases: releasesSlots(gate.limiter),
    inFlight: shedder?.countsInFlight ? shedder : undefined,
    debugHeader: options.debugHeader,
  }
  const names = gate.responder.headerNames

  function factsOf(req: Req): RequestFacts {
    const user = read.user(req)
    const address = framework.socketAddress(req)
    const cut = framework.headersCut?.(req) ?? false
    const identities = headers.identities(requestIdentities, address, req, user, cut)
    return {
      method: framework.method(req),
      path: framework.path(req),
      plan: read.plan?.(req),
      identities:
        read.identities === undefined ? identities : { ...identities, ...read.identities(req) },
    }
  }

  return {
    watchesEnd: refundIf !== undefined || shared.releases || shared.inFlight !== undefined,
    releasesSlots: shared.releases,
    fieldNames: options.exposeHeaders ? [...names, 'Access-Control-Expose-Headers'] : names,
    enter(req, res) {
      if (skip?.(req, res)) return undefined
      const facts = factsOf(req)
      const pass = new Pass(shared, req, res)
      if (shedder !== undefined) {
        const shed = shedder.refuse(req, facts.method, facts.path)
        if (shed !== undefined) return pass.settle({ response: shed, verdict: undefined })
        if (shared.inFlight !== undefined) {
          shedder.started()
          pass.count()
        }
      }
      let outcome: ReturnType<typeof gate.handleAdmitted>
      try {
        outcome = gate.handleAdmitted(facts, pass)
      } catch (error) {
        pass.uncount()
        throw error
      }
      if (!isPromise(outcome)) return pass.settle(outcome)
      pass.ready = outcome.then(
        (settled) => pass.settle(settled),
        (error: unknown) => {
          pass.uncount()
          return pass.dropIfGone(error)
        },
      )
      return pass
    },
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
    throw new RateLimitError('ERR_RL_INVALID_RULE', 'shed: expected loadShedder({ ... })', {
      field: 'shed',
    })
  }
  return shed.bind(clock, runtimeDelay)
}
