import { concurrency } from './concurrency.js'
import { fixedWindow } from './fixed-window.js'
import { gcra } from './gcra.js'
import { leakyBucket } from './leaky-bucket.js'
import { leakyQueue, type QueueParams } from './leaky-queue.js'
import type { WindowParams } from './params.js'
import { slidingLog } from './sliding-log.js'
import { slidingWindow } from './sliding-window.js'
import { tokenBucket } from './token-bucket.js'
import type { Algorithm, AlgorithmName } from './types.js'

/**
 * The algorithms rules may name, by the name a rule gives (`algorithm: 'token_bucket'`), each
 * with the factory that compiles it. A rate rule's factory is called with its `RateParams` (a
 * queue rule's with its `QueueParams`: `delay` and `maxWaitMs` besides), a window rule's with its
 * `WindowParams` (plus `buckets` for sub-window counters), or a calendar window's with its
 * `CalendarWindowParams`. The built-in factories also read the rule fields only their algorithm
 * takes (a queue's `delay`, a calendar window's `timeZone`…); a function of your own in their
 * place gets a rate or window rule's figures, and a rule giving such a field is refused.
 * @example { token_bucket: tokenBucket, sliding_log: slidingLog }
 */
export type AlgorithmTable = {
  readonly [Name in AlgorithmName]?: (params: QueueParams & WindowParams) => Algorithm
}

/**
 * Every built-in algorithm: what `createLimiter` and `rateLimit()` accept by default. Rules name
 * algorithms by string, so whatever reaches this table bundles all of them. A new algorithm is
 * listed here and nowhere else on the common path (see test/bundle-size/bundle-size.test.ts).
 */
export const BUILT_IN_ALGORITHMS: AlgorithmTable = {
  token_bucket: tokenBucket,
  gcra,
  leaky_bucket: leakyBucket,
  leaky_queue: leakyQueue,
  fixed_window: fixedWindow,
  sliding_log: slidingLog,
  sliding_window: slidingWindow,
  concurrency,
}
