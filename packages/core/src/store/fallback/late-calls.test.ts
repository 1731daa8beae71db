import { describe, expect, it } from 'vitest'
import { fixedWindow } from '../../algorithms/fixed-window.js'
import { RateLimitError } from '../../errors.js'
import { createLimiter } from '../../limiter/create-limiter.js'
import type { RuleConfig } from '../../rules/types.js'
import { memoryStore } from '../memory-store.js'
import type { Charge, Store } from '../types.js'
import { fallbackStore } from './fallback-store.js'

// Calls the fallback store gave up on, run by the shared store later: a hung Redis (SIGSTOP, an
// overloaded server) keeps what each connection sent it and runs it when it resumes, after the
// caller's deadline made the limiter decide the request locally. Each instance's connection is
// a queue of its own here; the test says when, and in which order, the queues are run, on the
// time it passes to `decide`. The docs' bound (failure-modes.md, "The bound"): such a call
// counts once more, stricter, never looser: between what was admitted and that plus the units
// of the calls given up on.

const WINDOW = 60_000
const rule: RuleConfig = {
  id: 'login',
  match: { identity: 'ip' },
  algorithm: 'fixed_window',
  limit: 100,
  window: '1m',
  onStoreError: 'fallback',
}
const facts = { method: 'GET', path: '/', identities: { ip: '192.0.2.1' } }

function hungServer() {
  const inner = memoryStore()
  const queues: (() => void)[][] = []
  let hung = false
  let givenUp = 0
  const connection = (): Store => {
    const queue: (() => void)[] = []
    queues.push(queue)
    return {
      consume: async (charges: readonly Charge[], now: number) => {
        if (!hung) return inner.consume(charges, now)
        // Sent, not answered within the deadline: the caller gives up, the server runs it later.
        queue.push(() => inner.consume(charges, now))
        givenUp += charges.reduce((sum, charge) => sum + charge.cost, 0)
        throw new RateLimitError('ERR_RL_STORE_UNAVAILABLE', 'Redis did not answer within 250 ms')
      },
      refund: async (charges, chargedAt, now) => inner.refund(charges, chargedAt, now),
      timeoutMs: 250,
      shared: true,
    }
  }
  return {
    connection,
    hang: () => {
      hung = true
    },
    /** Resumes, running the connections' queues in `order` (their creation order by default). */
    resume: (order: readonly number[] = queues.map((_, i) => i)) => {
      hung = false
      for (const i of order) for (const run of queues[i]!.splice(0)) run()
    },
    givenUp: () => givenUp,
    /** What the shared store has counted in the window of `now`. */
    counted: (now: number) => {
      const algorithm = fixedWindow({ limit: 100, windowMs: WINDOW })
      const charge = { rule: 'login', algorithm, key: 'ip:192.0.2.1', cost: 0, shadow: false }
      return 100 - inner.consume([charge], now).decisions[0]!.remaining
    },
  }
}

function instance(server: ReturnType<typeof hungServer>, instances: number) {
  const store = fallbackStore(server.connection(), { instances, logger: false })
  const limiter = createLimiter({ rules: [rule], store, logger: false })
  return async (count: number, now: number) => {
    let admitted = 0
    for (let i = 0; i < count; i++) if ((await limiter.decide(facts, { now })).allowed) admitted++
    return admitted
  }
}

describe('calls the fallback store gave up on, run later by the shared store', () => {
  it('in the window of the recovery: counted once more, never less than admitted', async () => {
    const server = hungServer()
    const gateway = instance(server, 1)
    server.hang()
    let admitted = await gateway(10, 1000) // three time out, the circuit opens, all ten local
    expect(server.givenUp()).toBe(3)
    server.resume() // the three run now
    admitted += await gateway(1, 2000) // the first probe charges the ten, decides here
    admitted += await gateway(1, 3000) // the last charges the eleventh, then its own
    expect(admitted).toBe(12)
    const counted = server.counted(3000)
    expect(counted).toBeGreaterThanOrEqual(admitted)
    expect(counted).toBeLessThanOrEqual(admitted + server.givenUp())
  })

  it('in a later window than theirs, when another instance moved the key there first', async () => {
    const server = hungServer()
    const a = instance(server, 2)
    const b = instance(server, 2)
    server.hang()
    // The outage's first window: three calls each, given up on.
    await a(3, WINDOW)
    await b(3, WINDOW)
    // The next window: a's first probe (nothing owed of this window: asked at cost 0) is given
    // up on too; each admits five locally.
    let admitted = (await a(5, 2 * WINDOW)) + (await b(5, 2 * WINDOW))
    expect(server.givenUp()).toBe(6)
    // a's queue runs first; a's probe then moves the key into this window before b's queue runs:
    // b's three of the window before count in this one (as a charge from a clock behind does).
    server.resume([0])
    admitted += await a(1, 2 * WINDOW + 1000)
    server.resume([1])
    admitted += await b(1, 2 * WINDOW + 1000)
    admitted += (await a(1, 2 * WINDOW + 2000)) + (await b(1, 2 * WINDOW + 2000))
    const counted = server.counted(2 * WINDOW + 2000)
    expect(counted).toBeGreaterThan(admitted) // b's stale three are here
    expect(counted).toBeLessThanOrEqual(admitted + server.givenUp())
  })
})
