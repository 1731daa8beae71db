import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { callScript, deadlineIn } from './call.js'
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
