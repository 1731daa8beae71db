import type { SlotQueues } from '../wait/slot-queues.js'
import { admittedCharges } from './admitted-charges.js'
import type { CompiledRule } from './compile-rule.js'
import { type Engine, isPromiseLike } from './engine.js'
import { refundCharges } from './store-calls.js'
import type { DecideOptions, Limiter, Verdict } from './types.js'

/** The memory store's single-charge refund: no array, no checks beyond its own. */
export type RefundOne = (
  rule: string,
  algorithm: CompiledRule['algorithm'],
  key: string,
  cost: number,
  chargedAt: number,
  now: number,
) => void

/** What `release` needs of its limiter. */
export type ReleaseHost = {
  readonly engine: Engine
  readonly byId: ReadonlyMap<string, CompiledRule>
  readonly timeOf: (given: DecideOptions | undefined) => [number, Engine]
  readonly refundOne: RefundOne | undefined
  readonly queues: SlotQueues<Verdict> | undefined
}

/** A verdict as `release` marks it: its slots came back once (see `Verdict.slotsReleased`). */
type Releasable = { slotsReleased?: true | undefined }

/**
 * Builds `Limiter.release`. A verdict is marked released on itself (no set to keep it in: a set
 * costs as much as the rest of the release); a verdict of one concurrency rule on the memory
 * store gives its slot back through the store's `refundOne`, without building a charge list.
 */
export function createRelease(host: ReleaseHost): NonNullable<Limiter['release']> {
  const { engine, byId, refundOne, queues } = host
  const ruleOf = (id: string) => byId.get(id)
  return function release(verdict, given) {
    if (!verdict.allowed || verdict.storeFailed === true || verdict.slotsReleased === true) return
    const decisions = verdict.decisions
    if (decisions.length === 1 && refundOne !== undefined && given?.now === undefined) {
      const d = decisions[0]!
      const rule = byId.get(d.rule)
      if (rule === undefined || rule.algorithm.name !== 'concurrency') return
      if (!d.allowed || d.cost === 0 || d.key === undefined || d.storeFailed === true) return
      ;(verdict as Releasable).slotsReleased = true
      try {
        // Slots come back whatever the time: no clock read.
        refundOne(rule.id, rule.algorithm, d.key, d.cost, verdict.at, verdict.at)
      } catch (error) {
        engine.reporter.storeError(error, {
          operation: 'refund',
          rules: [rule.id],
          failClosed: false,
        })
        return
      }
      queues?.released([{ rule: rule.id, key: d.key }])
      return
    }
    const charges = admittedCharges(verdict, ruleOf, true)
    if (charges.length === 0) return
    ;(verdict as Releasable).slotsReleased = true
    // Slots come back whatever the time: no clock read, unless a time is given.
    const [now, releasing] = given?.now === undefined ? [verdict.at, engine] : host.timeOf(given)
    const done = refundCharges(releasing, charges, verdict.at, now)
    if (queues === undefined) return done
    // Back in the store first: the next in line is decided against it.
    if (!isPromiseLike(done)) return queues.released(charges)
    return done.then(() => queues.released(charges))
  }
}
