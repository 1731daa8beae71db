/**
 * The Express example in the repository's README, run as written (only the port changed), so
 * that the first code a reader copies keeps working.
 */
import { type ChildProcess, spawn } from 'node:child_process'
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, expect, it } from 'vitest'

const README = new URL('../../../README.md', import.meta.url)
// Inside this package, so that its dependencies resolve; .tmp/ is ignored by git and Biome.
const TMP = new URL('../.tmp/', import.meta.url)

/** The first TypeScript block under "## Install and use". */
function readmeExample(): string {
  const text = readFileSync(README, 'utf8')
  const section = text.slice(text.indexOf('## Install and use'))
  const match = /```ts\n([\s\S]*?)```/.exec(section)
  if (match?.[1] === undefined)
    throw new Error('README.md has no ts block under "## Install and use"')
  return match[1]
}

let child: ChildProcess
let base: string

beforeAll(async () => {
  const code = readmeExample()
  expect(code.split('\n').filter(Boolean).length).toBeLessThanOrEqual(15)
  expect(code).toContain('app.listen(3000)')
  mkdirSync(TMP, { recursive: true })
  const file = fileURLToPath(new URL('readme-example.ts', TMP))
  writeFileSync(
    file,
    code.replace(
      'app.listen(3000)',
      "const server = app.listen(0, () => console.log('port=' + server.address().port))",
    ),
  )
  child = spawn(process.execPath, ['--conditions=@tollgate/source', '--import', 'tsx', file], {
    cwd: fileURLToPath(new URL('..', import.meta.url)),
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  const port = await new Promise<string>((resolve, reject) => {
    let out = ''
    child.stdout!.on('data', (chunk) => {
      out += String(chunk)
      const found = /port=(\d+)/.exec(out)
      if (found) resolve(found[1]!)
    })
    child.once('exit', (code) => reject(new Error(`the README example exited with ${code}`)))
  })
  base = `http://127.0.0.1:${port}`
}, 30_000)

afterAll(() => {
  child?.kill()
})

it('answers with the rate-limit fields', async () => {
  const response = await fetch(`${base}/`)
  expect(response.status).toBe(200)
  expect(await response.text()).toBe('Hello')
  expect(response.headers.get('ratelimit')).toBe('"per-ip";r=19;t=1')
})

it('allows 5 login attempts a minute', async () => {
  const statuses: number[] = []
  for (let i = 0; i < 6; i++)
    statuses.push((await fetch(`${base}/login`, { method: 'POST' })).status)
  expect(statuses).toEqual([200, 200, 200, 200, 200, 429])
})
