import type { RedisScriptClient } from '@tollgate/redis'
import { manualTime } from '@tollgate/test-utils'

/**
 * Time for Redis stores' call deadlines (their `deadlines` option) that moves only when the test
 * says, and the client they call through, which tells of every call sent. A test of a Redis
 * that fails makes a call time out by moving this time once the call is on its way, never by
 * waiting for its budget to pass; and no call to a Redis that answers times out because a loaded
 * machine was slow.
 */
export function drivenDeadlines(client: RedisScriptClient, timeoutMs: number) {
  const time = manualTime()
  let sent = 0
  const waiters: Array<{ after: number; resolve: () => void }> = []
  const tell = () => {
    sent++
    for (const waiter of waiters.splice(0)) {
      if (sent > waiter.after) waiter.resolve()
      else waiters.push(waiter)
    }
  }
  /** Resolves once more than `after` calls have been sent. */
  const untilSent = (after: number) =>
    new Promise<void>((resolve) => {
      if (sent > after) resolve()
      else waiters.push({ after, resolve })
    })
  const watched: RedisScriptClient = {
    cluster: client.cluster,
    autoPipelining: client.autoPipelining,
    evalsha: (sha, keys, args) => {
      // Told before the client is called: the store has set the call's deadline by then.
      tell()
      return client.evalsha(sha, keys, args)
    },
    eval: (source, keys, args) => {
      tell()
      return client.eval(source, keys, args)
    },
  }
  return {
    client: watched,
    deadlines: { clock: time.clock, timers: time.timers },
    /** The deadlines' time, in ms. */
    now: time.now,
    advance: time.advance,
    /** How many calls the stores have sent so far. */
    sent: () => sent,
    untilSent,
    /**
     * Settles what `start` starts (a decision, a release) while Redis cannot answer: each time it has a call
     * on its way, the time moves to that call's deadline, a ms short first, so a call given up
     * early would be seen as such (`now()` short of the budget). For a Redis that is down or
     * hung only: a call that would be answered could be timed out first.
     */
    async timingOut<T>(start: () => T | PromiseLike<T>): Promise<T> {
      // Counted before it starts: its first call may be sent before `start` returns.
      let seen = sent
      const work = (async () => start())()
      let settled = false
      const done = work.then(
        () => {
          settled = true
        },
        () => {
          settled = true
        },
      )
      while (!settled) {
        if (sent === seen) await Promise.race([done, untilSent(seen)])
        if (settled) break
        seen = sent
        await time.advance(timeoutMs - 1)
        if (!settled) await time.advance(1)
      }
      return work
    },
  }
}

export type DrivenDeadlines = ReturnType<typeof drivenDeadlines>
