// A scripted fetch on manual time, for the client's tests. Not exported from the package.

import { manualTime } from '@tollgate/test-utils'
import { type ClientEvent, type ClientOptions, createClient } from './index.js'

export const START = 1_700_000_000_000
export type Answer = { status: number; headers?: Record<string, string> }

/** A client whose fetch answers from a script and records when each request was sent. */
export function setup(
  answers: Answer[] | ((sent: number) => Answer),
  options: Partial<ClientOptions> = {},
) {
  const time = manualTime(START)
  const sent: Array<{ at: number; method: string; body: string }> = []
  const events: ClientEvent[] = []
  const client = createClient({
    clock: time.clock,
    timers: time.timers,
    random: () => 0.5,
    onEvent: (event) => events.push(event),
    ...options,
    fetch: async (request) => {
      sent.push({ at: time.now(), method: request.method, body: await request.text() })
      const answer =
        typeof answers === 'function' ? answers(sent.length) : answers[sent.length - 1]!
      return new Response('', { status: answer.status, headers: answer.headers })
    },
  })
  /** Runs a call to completion, moving the clock through every wait it makes. */
  const run = async (input: string, init?: RequestInit) => {
    const pending = client.fetch(input, init)
    await time.runAll()
    return pending
  }
  return { time, client, sent, events, run }
}
