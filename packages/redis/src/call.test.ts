import { manualTime } from '@tollgate/test-utils'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { callWatch, systemCallWatch } from './call.js'
import type { RedisScriptClient } from './client.js'

const SCRIPT = { sha: 'abc', source: 'return 1' }
const asIs = (reply: unknown) => reply

/** A client whose EVALSHA answers only when the test says so. */
function manualClient() {
  const answers: ((reply: unknown) => void)[] = []
  const client: RedisScriptClient = {
    evalsha: () => new Promise((resolve) => answers.push(resolve)),
    eval: () => Promise.reject(new Error('unexpected EVAL')),
  }
  return { client, answers }
}

/** The promise's outcome so far: 'pending', or what it settled with. */
function track(promise: Promise<unknown>) {
  const state: { settled: 'pending' | 'resolved' | 'rejected'; value?: unknown } = {
    settled: 'pending',
  }
  promise.then(
    (value) => Object.assign(state, { settled: 'resolved', value }),
    (value: unknown) => Object.assign(state, { settled: 'rejected', value }),
  )
  return state
}

const { callScript, deadlineIn } = systemCallWatch

describe('callScript deadlines (fake clock)', () => {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] })
  })
  afterEach(() => {
    vi.useRealTimers()
  })

  it('gives up on a call that never answers exactly when the time is up', async () => {
    const { client } = manualClient()
    const call = track(callScript(client, SCRIPT, [], [], deadlineIn(30), asIs))
    await vi.advanceTimersByTimeAsync(29)
    expect(call.settled).toBe('pending')
    await vi.advanceTimersByTimeAsync(1)
    expect(call).toMatchObject({ settled: 'rejected', value: { code: 'ERR_RL_STORE_UNAVAILABLE' } })
    expect((call.value as Error).message).toMatch(/Redis did not answer within 30 ms/)
  })

  it('times out a short call that starts after a long one, and lets the long one answer', async () => {
    const { client, answers } = manualClient()
    const long = track(callScript(client, SCRIPT, [], [], deadlineIn(5000), asIs))
    const short = track(callScript(client, SCRIPT, [], [], deadlineIn(20), asIs))
    await vi.advanceTimersByTimeAsync(20)
    expect(short.settled).toBe('rejected')
    expect(long.settled).toBe('pending')
    answers[0]!('late but in time')
    await vi.advanceTimersByTimeAsync(0)
    expect(long).toMatchObject({ settled: 'resolved', value: 'late but in time' })
  })

  it('still times out other calls after a timed-out call answers late', async () => {
    const { client, answers } = manualClient()
    const early = track(callScript(client, SCRIPT, [], [], deadlineIn(20), asIs))
    const later = track(callScript(client, SCRIPT, [], [], deadlineIn(100), asIs))
    await vi.advanceTimersByTimeAsync(20)
    expect(early.settled).toBe('rejected')
    answers[0]!('too late') // ignored: the call already failed
    await vi.advanceTimersByTimeAsync(79)
    expect(later.settled).toBe('pending')
    await vi.advanceTimersByTimeAsync(1)
    expect(later).toMatchObject({
      settled: 'rejected',
      value: { code: 'ERR_RL_STORE_UNAVAILABLE' },
    })
    expect(early.value).toMatchObject({ code: 'ERR_RL_STORE_UNAVAILABLE' })
  })
})

describe('callScript deadlines on injected time', () => {
  it("times out on its own clock and timers, never on the runtime's", async () => {
    const time = manualTime(5_000)
    const watch = callWatch(time)
    const { client, answers } = manualClient()
    const early = track(watch.callScript(client, SCRIPT, [], [], watch.deadlineIn(30), asIs))
    const late = track(watch.callScript(client, SCRIPT, [], [], watch.deadlineIn(100), asIs))
    // One timer for both, armed for the earlier deadline.
    expect(time.pending()).toBe(1)
    await time.advance(29)
    expect(early.settled).toBe('pending')
    await time.advance(1)
    expect(early).toMatchObject({
      settled: 'rejected',
      value: { code: 'ERR_RL_STORE_UNAVAILABLE' },
    })
    expect(late.settled).toBe('pending')
    answers[1]!('in time')
    await time.advance(0)
    expect(late).toMatchObject({ settled: 'resolved', value: 'in time' })
    // Nothing left waiting: the timer re-armed for the later call fires and arms no other.
    await time.runAll()
    expect(time.pending()).toBe(0)
  })

  it('fails a call whose deadline has already passed without calling Redis', async () => {
    const time = manualTime()
    const watch = callWatch(time)
    const deadline = watch.deadlineIn(10)
    await time.advance(10)
    let calls = 0
    const client: RedisScriptClient = {
      evalsha: async () => calls++,
      eval: async () => calls++,
    }
    await expect(watch.callScript(client, SCRIPT, [], [], deadline, asIs)).rejects.toMatchObject({
      code: 'ERR_RL_STORE_UNAVAILABLE',
    })
    expect(calls).toBe(0)
  })
})

describe('callScript answers and failures', () => {
  it('turns any client failure, thrown or rejected, into ERR_RL_STORE_UNAVAILABLE with its cause', async () => {
    const cause = new Error('connect ECONNREFUSED')
    const clients: RedisScriptClient[] = [
      { evalsha: () => Promise.reject(cause), eval: () => Promise.reject(cause) },
      {
        evalsha: () => {
          throw cause
        },
        eval: () => Promise.reject(cause),
      },
    ]
    for (const client of clients) {
      const error = await callScript(client, SCRIPT, [], [], deadlineIn(1000), asIs).catch(
        (e: unknown) => e,
      )
      expect(error).toMatchObject({ code: 'ERR_RL_STORE_UNAVAILABLE', cause })
    }
  })

  it('passes keys and arguments, and settles with what `read` makes of the reply', async () => {
    const client: RedisScriptClient = {
      evalsha: async (sha, keys, args) => [sha, ...keys, ...args],
      eval: () => Promise.reject(new Error('unexpected EVAL')),
    }
    const read = (reply: unknown) => (reply as string[]).join(' ')
    expect(await callScript(client, SCRIPT, ['k'], ['1', '2'], deadlineIn(1000), read)).toBe(
      'abc k 1 2',
    )
  })

  it('rejects with the error `read` throws, as it is', async () => {
    const client: RedisScriptClient = { evalsha: async () => 'odd', eval: async () => 'odd' }
    const unreadable = new Error('unexpected script reply')
    const read = () => {
      throw unreadable
    }
    await expect(callScript(client, SCRIPT, [], [], deadlineIn(1000), read)).rejects.toBe(
      unreadable,
    )
  })

  it('sends the source once when the server has lost the script (NOSCRIPT)', async () => {
    const calls: string[] = []
    const client: RedisScriptClient = {
      evalsha: async (sha) => {
        calls.push(`evalsha ${sha}`)
        throw new Error('NOSCRIPT No matching script. Please use EVAL.')
      },
      eval: async (source) => {
        calls.push(`eval ${source}`)
        return 'ran'
      },
    }
    expect(await callScript(client, SCRIPT, [], [], deadlineIn(1000), asIs)).toBe('ran')
    expect(calls).toEqual(['evalsha abc', 'eval return 1'])
  })

  it('does not retry other errors', async () => {
    let evals = 0
    const client: RedisScriptClient = {
      evalsha: async () => {
        throw new Error('OOM command not allowed')
      },
      eval: async () => {
        evals++
        return 'ran'
      },
    }
    await expect(callScript(client, SCRIPT, [], [], deadlineIn(1000), asIs)).rejects.toMatchObject({
      code: 'ERR_RL_STORE_UNAVAILABLE',
      message: expect.stringMatching(/OOM/),
    })
    expect(evals).toBe(0)
  })
})
