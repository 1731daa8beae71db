import { type ClientRequest, type IncomingMessage, request } from 'node:http'
import type { Limiter, Verdict } from '@tollgate/core'

type Answer = {
  readonly status: number
  readonly headers: IncomingMessage['headers']
  readonly body: string
}

/** An exchange in progress: its response head, and the request to destroy (a disconnect). */
export type Exchange = {
  readonly head: Promise<IncomingMessage>
  readonly answer: Promise<Answer>
  readonly request: ClientRequest
}

/** Sends GET `path` on a connection of its own. */
export function open(port: number, path: string): Exchange {
  const req = request({ host: '127.0.0.1', port, path, agent: false })
  const head = new Promise<IncomingMessage>((resolve, reject) => {
    req.once('response', resolve)
    req.once('error', reject)
  })
  const answer = head.then(
    (res) =>
      new Promise<Answer>((resolve, reject) => {
        let body = ''
        res.setEncoding('utf8')
        res.on('data', (chunk: string) => {
          body += chunk
        })
        res.once('end', () => resolve({ status: res.statusCode!, headers: res.headers, body }))
        res.once('error', reject)
      }),
  )
  // A destroyed request rejects both: the tests that destroy one do not read them.
  head.catch(() => {})
  answer.catch(() => {})
  req.end()
  return { head, answer, request: req }
}

/** The first chunk of a response's body. */
export function firstChunk(res: IncomingMessage): Promise<string> {
  return new Promise((resolve) => res.once('data', (chunk: Buffer) => resolve(String(chunk))))
}

/**
 * The limiter as the adapter sees it, with every `release` call recorded: how many, and
 * whether any verdict was released twice. `released(n)` resolves once `n` calls were made.
 */
export function watchReleases(limiter: Limiter) {
  const calls = new Map<Verdict, number>()
  let count = 0
  const waiters: Array<{ n: number; resolve: () => void }> = []
  const watched: Limiter = {
    get rules() {
      return limiter.rules
    },
    get store() {
      return limiter.store
    },
    get clockStepsBack() {
      return limiter.clockStepsBack
    },
    decide: (facts, options) => limiter.decide(facts, options),
    check: (key, rule, options) => limiter.check(key, rule, options),
    refund: (verdict, options) => limiter.refund(verdict, options),
    acquire: (facts, options) => limiter.acquire(facts, options),
    hold: (verdict, options) => limiter.hold(verdict, options),
    release(verdict, options) {
      calls.set(verdict, (calls.get(verdict) ?? 0) + 1)
      count++
      const done = limiter.release!(verdict, options)
      for (const waiter of waiters.splice(0)) {
        if (count >= waiter.n) waiter.resolve()
        else waiters.push(waiter)
      }
      return done
    },
  }
  return {
    limiter: watched,
    released(n: number): Promise<void> {
      if (count >= n) return Promise.resolve()
      return new Promise((resolve) => waiters.push({ n, resolve }))
    },
    get count() {
      return count
    },
    /** The most times one verdict was released (1 when every slot went back once). */
    get mostPerVerdict() {
      return Math.max(0, ...calls.values())
    },
  }
}
