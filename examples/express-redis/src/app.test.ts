/**
 * Two instances of the app, each with its own Redis connection, share one limit. Needs a Redis
 * server: skipped with a warning without one, except in CI, where that fails the run.
 */
import { randomBytes } from 'node:crypto'
import type { Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { ioredisClient, redisStore } from '@tollgate/redis'
import { REDIS_URL, redisForTest } from '@tollgate/test-utils'
import { Redis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createApp } from './app.js'

const available = await redisForTest('the Express + Redis example test')

describe.runIf(available)('Express with the Redis store', () => {
  const prefix = `example-test:${randomBytes(4).toString('hex')}`
  const clients: Redis[] = []
  const servers: Server[] = []
  const bases: string[] = []

  beforeAll(async () => {
    for (let i = 0; i < 2; i++) {
      const redis = new Redis(REDIS_URL)
      clients.push(redis)
      const server = createApp(redisStore({ client: ioredisClient(redis), prefix })).listen(
        0,
        '127.0.0.1',
      )
      await new Promise((resolve) => server.once('listening', resolve))
      servers.push(server)
      bases.push(`http://127.0.0.1:${(server.address() as AddressInfo).port}`)
    }
  })

  afterAll(async () => {
    for (const server of servers) {
      server.closeAllConnections()
      server.close()
    }
    const keys = await clients[0]!.keys(`${prefix}:*`)
    if (keys.length > 0) await clients[0]!.del(...keys)
    await Promise.all(clients.map((client) => client.quit()))
  })

  it('admits a burst of 10 per API key across both instances, then 429', async () => {
    const statuses: number[] = []
    for (let i = 0; i < 12; i++) {
      const response = await fetch(`${bases[i % 2]}/`, { headers: { 'x-api-key': 'k_1' } })
      statuses.push(response.status)
    }
    expect(statuses).toEqual([...Array(10).fill(200), 429, 429])
    // One token every 36 s.
    const denied = await fetch(`${bases[0]}/`, { headers: { 'x-api-key': 'k_1' } })
    expect(Number(denied.headers.get('retry-after'))).toBeGreaterThan(30)
    // One key per identity (the store's default layout), whatever rules count on it.
    expect(await clients[0]!.keys(`${prefix}:*`)).toEqual([`${prefix}:{api_key:k_1}`])
  })

  it('counts login attempts per IP across both instances', async () => {
    const statuses: number[] = []
    for (let i = 0; i < 6; i++) {
      statuses.push((await fetch(`${bases[i % 2]}/login`, { method: 'POST' })).status)
    }
    expect(statuses).toEqual([200, 200, 200, 200, 200, 429])
  })
})
