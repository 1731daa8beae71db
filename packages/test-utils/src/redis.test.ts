import { createServer } from 'node:net'
import { afterEach, expect, it, vi } from 'vitest'
import { redisForTest } from './redis.js'

/** A port where nothing listens: bound, then released. */
async function closedPort(): Promise<number> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as { port: number }
  await new Promise<void>((resolve) => server.close(() => resolve()))
  return port
}

afterEach(() => {
  vi.restoreAllMocks()
})

it('skips with a visible warning outside CI when no Redis answers', async () => {
  const warn = vi.spyOn(console, 'warn').mockImplementation(() => {})
  const url = `redis://127.0.0.1:${await closedPort()}`
  expect(await redisForTest('the thing', url, false)).toBe(false)
  expect(warn).toHaveBeenCalledWith(`[tollgate] the thing SKIPPED: no Redis answered at ${url}`)
})

it('fails in CI when no Redis answers', async () => {
  const url = `redis://127.0.0.1:${await closedPort()}`
  await expect(redisForTest('the thing', url, true)).rejects.toThrow(
    `CI needs a Redis server at ${url}`,
  )
})
