import { Redis } from 'ioredis'

/** Deletes the demo's keys (`<prefix>:*`), so runs leave nothing behind in a shared Redis. */
export async function deleteKeys(url: string, prefix: string): Promise<number> {
  const client = new Redis(url, { lazyConnect: true })
  client.on('error', () => {})
  await client.connect()
  let deleted = 0
  try {
    let cursor = '0'
    do {
      const [next, keys] = await client.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000)
      if (keys.length > 0) deleted += await client.del(...keys)
      cursor = next
    } while (cursor !== '0')
  } finally {
    client.disconnect()
  }
  return deleted
}
