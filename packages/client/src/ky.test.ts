import { manualTime } from '@tollgate/test-utils'
import ky from 'ky'
import { expect, it } from 'vitest'
import { createClient, kyHooks } from './index.js'

const START = 1_700_000_000_000

it('with kyHooks, ky calls wait for what the client learned from earlier responses', async () => {
  const time = manualTime(START)
  const sentAt: number[] = []
  const fetch = async () => {
    sentAt.push(time.now() - START)
    return new Response('{}', {
      headers: { 'content-type': 'application/json', RateLimit: '"p";r=0;t=2' },
    })
  }
  const client = createClient({ clock: time.clock, timers: time.timers, maxJitterMs: 0 })
  const api = ky.create({ fetch, hooks: kyHooks(client), retry: 0 })
  await api.get('https://api.test/a').json()
  expect(client.learnedPolicies()).toBe(1)
  const second = api.get('https://api.test/b').json()
  await time.runAll()
  await second
  expect(sentAt).toEqual([0, 2000])
})

it('ky with the client as its fetch: the client retries a 429 after Retry-After', async () => {
  const time = manualTime(START)
  const statuses = [429, 200]
  const sentAt: number[] = []
  const client = createClient({
    clock: time.clock,
    timers: time.timers,
    random: () => 0,
    fetch: async () => {
      sentAt.push(time.now() - START)
      return new Response('{}', {
        status: statuses.shift(),
        headers: { 'Retry-After': '4', 'content-type': 'application/json' },
      })
    },
  })
  const api = ky.create({ fetch: client.fetch, retry: 0 })
  const body = api.get('https://api.test/').json()
  await time.runAll()
  expect(await body).toEqual({})
  expect(sentAt).toEqual([0, 4000])
})
