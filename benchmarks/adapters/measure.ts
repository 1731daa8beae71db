/**
 * CPU cost per request, measured in-process with one request in flight. Wall-clock time on a
 * shared 2-core machine swings with whatever else runs; `process.cpuUsage()` counts only the
 * time this process spent on the CPU, so it is the steadier figure. It still swings: while
 * other work runs, the same block of requests can take twice the CPU time (shared caches and
 * cores), in phases longer than a round.
 */

/** Sends one request through the app and resolves once the response is complete. */
export type Send = () => Promise<unknown>

export type Variant = { readonly name: string; readonly send: Send }

const gc = globalThis.gc as ((options: { type: 'minor' | 'major' }) => void) | undefined

/** Empties the young generation, where nearly all of a request's garbage is. */
function collectYoungGeneration(): void {
  if (gc === undefined) throw new Error('run with --expose-gc (bench:adapters does)')
  gc({ type: 'minor' })
}

/**
 * CPU µs (user + system) this process spends per request over `count` sequential requests,
 * including the collection of their garbage. The block starts with an empty young generation
 * and ends by collecting it, inside the measurement: with one large enough to hold a block's
 * garbage (`--min-semi-space-size=32`), every block pays for exactly one collection of its own
 * garbage, where a scavenge falling at some place in the rotation would charge one block for
 * everyone's.
 */
async function cpuMicrosPerRequest(send: Send, count: number): Promise<number> {
  collectYoungGeneration()
  const before = process.cpuUsage()
  for (let i = 0; i < count; i++) {
    await send()
    // Awaiting promises alone never reaches the event loop's check phase, so the work servers
    // defer with setImmediate (light-my-request, Node's http) would pile up and hold earlier
    // requests in memory, where the garbage collector copies them. Let it run after each
    // request, inside the measurement: one request in flight means one.
    await new Promise(setImmediate)
  }
  collectYoungGeneration()
  const used = process.cpuUsage(before)
  return (used.user + used.system) / count
}

/** The value a quarter of the way up: what a variant costs when nothing else disturbs it. */
export function lowerQuartile(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.floor((sorted.length - 1) / 4)]!
}

export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b)
  const middle = sorted.length >> 1
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2
}

export type RoundsOptions = {
  /** Requests per variant before any measurement, so the JIT has settled. */
  readonly warmup: number
  /** Measured rounds; each runs every variant once, in a rotated order. */
  readonly rounds: number
  /** Requests per variant per round. */
  readonly perRound: number
}

/**
 * Runs every variant `rounds` times, interleaved (and in a rotating order, so no variant always
 * runs right after the garbage another one left), and returns each variant's CPU µs per
 * request, one figure per round.
 */
export async function measureRounds(
  variants: readonly Variant[],
  options: RoundsOptions,
): Promise<Map<string, number[]>> {
  for (const variant of variants) await cpuMicrosPerRequest(variant.send, options.warmup)
  const samples = new Map<string, number[]>(variants.map((variant) => [variant.name, []]))
  for (let round = 0; round < options.rounds; round++) {
    for (let i = 0; i < variants.length; i++) {
      const variant = variants[(round + i) % variants.length]!
      samples.get(variant.name)!.push(await cpuMicrosPerRequest(variant.send, options.perRound))
    }
  }
  return samples
}

/**
 * The CPU a variant adds over the bare app: the lower quartile of its rounds minus that of the
 * bare app's. Other work on the machine only ever adds CPU time, and in phases that can cover
 * one variant's block of a round and not the next one's, so differences within a round swing
 * by more than the figures measured; each variant's quieter rounds are the steady figure.
 */
export function addedOverBare(samples: Map<string, number[]>, bare: string, name: string): number {
  return lowerQuartile(samples.get(name)!) - lowerQuartile(samples.get(bare)!)
}
