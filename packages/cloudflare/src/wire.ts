import type { Decision, RateLimitErrorDetails } from '@tollgate/core/store'
import type { AlgorithmRecipe } from './algorithm-recipe.js'

/*
 * What the store and the object say to each other: one JSON request, one JSON reply. Both ends
 * ship in the same Worker (the app exports the object class), so the format needs no version.
 */

/** A charge as it travels: its algorithm as a recipe. */
export type WireCharge = {
  readonly rule: string
  readonly key: string
  readonly cost: number
  readonly shadow: boolean
  readonly algorithm: AlgorithmRecipe
  /** A settlement's real cost. */
  readonly actual?: number
}

export type ObjectRequest = {
  readonly op: 'consume' | 'refund' | 'settle'
  readonly charges: readonly WireCharge[]
  /** The caller's time with `time: 'caller'`; absent, the object reads its own clock. */
  readonly now?: number
  /** For a refund or a settlement: when the charges were made (an `Outcome.at`). */
  readonly chargedAt?: number
  /**
   * For a refund: also answer what is left afterwards (cost-0 decisions), as a request undone
   * because another object denied it reports its other charges.
   */
  readonly look?: boolean
}

export type ObjectReply =
  | { readonly decisions: readonly Decision[]; readonly at: number }
  | { readonly error: WireError }

/** A `RateLimitError` the object threw (a bad rule or cost), rethrown by the store as it was. */
type WireError = RateLimitErrorDetails & { readonly code: string; readonly message: string }

/** The URL the store posts to; an object answers any. */
export const OBJECT_URL = 'https://tollgate.limiter/'
