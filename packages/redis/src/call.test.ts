import { describe, expect, it } from 'vitest'
import { beforeDeadline, deadlineIn, runScript } from './call.js'
import type { RedisScriptClient } from './client.js'

describe('beforeDeadline', () => {
  it('gives up on a call that never answers once the time is up', async () => {
    const started = performance.now()
    const hung = beforeDeadline(deadlineIn(30), () => new Promise<never>(() => {}))
    await expect(hung).rejects.toMatchObject({ code: 'ERR_RL_STORE_UNAVAILABLE' })
    expect(performance.now() - started).toBeGreaterThanOrEqual(29)
  })

  it('times out a short call that starts after a long one, and lets the long one answer', async () => {
    let answer: (value: string) => void = () => {}
    const long = beforeDeadline(deadlineIn(5000), () => new Promise<string>((r) => (answer = r)))
    const started = performance.now()
    const short = beforeDeadline(deadlineIn(20), () => new Promise<never>(() => {}))
    await expect(short).rejects.toMatchObject({ code: 'ERR_RL_STORE_UNAVAILABLE' })
    const waited = performance.now() - started
    expect(waited).toBeGreaterThanOrEqual(19)
    expect(waited).toBeLessThan(2000)
    answer('late but in time')
    await expect(long).resolves.toBe('late but in time')
  })

  it('turns any failure, thrown or rejected, into ERR_RL_STORE_UNAVAILABLE with its cause', async () => {
    const cause = new Error('connect ECONNREFUSED')
    for (const work of [
      () => Promise.reject(cause),
      () => {
        throw cause
      },
    ]) {
      const error = await beforeDeadline(deadlineIn(1000), work).catch((e: unknown) => e)
      expect(error).toMatchObject({ code: 'ERR_RL_STORE_UNAVAILABLE', cause })
    }
  })
})

describe('runScript', () => {
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
    expect(await runScript(client, { sha: 'abc', source: 'return 1' }, [], [])).toBe('ran')
    expect(calls).toEqual(['evalsha abc', 'eval return 1'])
  })

  it('does not retry other errors', async () => {
    const client: RedisScriptClient = {
      evalsha: async () => {
        throw new Error('OOM command not allowed')
      },
      eval: async () => 'ran',
    }
    await expect(runScript(client, { sha: 'abc', source: '' }, [], [])).rejects.toThrow(/OOM/)
  })
})
