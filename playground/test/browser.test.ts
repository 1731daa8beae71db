// The built playground in a real browser: Debian's Chromium, driven by playwright-core. Skips
// where Chromium is not installed, except in CI (CI set), where it must be (.ci/run installs it).
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { scenarioNamed, simulate } from '@tollgate/core/simulate'
import { type BrowserContext, chromium, type Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { serveFolder } from './static-server.js'

const CHROMIUM = '/usr/bin/chromium'
const FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
]
const DIST = fileURLToPath(new URL('../dist/', import.meta.url))
/** Kept by CI as artifacts (gitignored). */
const ARTIFACTS = fileURLToPath(new URL('../../artifacts/', import.meta.url))

const present = existsSync(CHROMIUM)
if (!present) {
  const why = `Chromium is not installed at ${CHROMIUM} (apt-get install -y chromium)`
  const { CI } = process.env
  if (CI) throw new Error(`${why}: CI must run the browser test`)
  console.warn(`skipping the playground's browser test: ${why}`)
}

describe.runIf(present)('the playground in Chromium', () => {
  let server: Awaited<ReturnType<typeof serveFolder>>
  let context: BrowserContext
  let page: Page
  let profile: string
  const pageErrors: string[] = []

  beforeAll(async () => {
    if (!existsSync(join(DIST, 'index.html'))) {
      throw new Error('the playground is not built: run pnpm build (pnpm test does)')
    }
    server = await serveFolder(DIST)
    profile = mkdtempSync(join(tmpdir(), 'tollgate-playground-chromium-'))
    context = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      headless: true,
      args: FLAGS,
      viewport: { width: 1100, height: 1400 },
    })
    page = await context.newPage()
    page.on('pageerror', (error) => pageErrors.push(error.message))
    await page.goto(server.url)
  }, 60_000)

  afterAll(async () => {
    await context?.close()
    await server?.close()
    if (profile !== undefined) rmSync(profile, { recursive: true, force: true })
  })

  const admitted = () => page.locator('[data-testid="admitted"]').allTextContents()

  it('opens on the minute-boundary figure: 200 / 100 / 116 / 133 admitted', async () => {
    await page.locator('[data-testid="admitted"]').nth(3).waitFor()
    expect(await admitted()).toEqual(['200', '100', '116', '133'])
    const figure = page.locator('[data-figure="minute-boundary"]')
    expect(await figure.locator('li').allTextContents()).toEqual([
      'Fixed window: 100 + 100 = 200',
      'Sliding log: 100 + 0 = 100',
      'Sliding counter: 100 + 16 = 116',
      'Token bucket: 100 + 33 = 133',
    ])
    expect(await page.locator('[data-figure="gcra-21"] li').nth(1).textContent()).toBe(
      'request 21 denied, retry in 100 ms',
    )
    expect(pageErrors).toEqual([])
  })

  it('a changed burst changes the token bucket’s count, as the core decides it, and the URL keeps it', async () => {
    const burst = page.locator('[data-lane="3"] input[data-field="burst"]')
    await burst.fill('50')
    await expect.poll(admitted).not.toEqual(['200', '100', '116', '133'])
    const scenario = scenarioNamed('minute-boundary')!
    const rule = { ...scenario.lanes[3]!.rules[0]!, burst: 50 }
    const expected = simulate({ rules: [rule], arrivals: scenario.arrivals }).requests.filter(
      (r) => r.allowed,
    )
    expect(await admitted()).toEqual(['200', '100', '116', String(expected.length)])
    await page.reload()
    await page.locator('[data-testid="admitted"]').nth(3).waitFor()
    expect(await admitted()).toEqual(['200', '100', '116', String(expected.length)])
  })

  it('shows a rule refused with the start-up message, and the other lanes still run', async () => {
    await page.locator('[data-lane="1"] input[data-field="limit"]').fill('0')
    const error = page.locator('[data-lane="1"] [data-testid="lane-error"]')
    await expect
      .poll(() => error.textContent())
      .toContain('rule "sliding-log": limit: expected a whole number ≥ 1, got 0')
    expect((await admitted())[0]).toBe('200')
  })

  it('saves a screenshot for CI', async () => {
    await page.goto(server.url)
    await page.locator('[data-testid="admitted"]').nth(3).waitFor()
    mkdirSync(ARTIFACTS, { recursive: true })
    const file = join(ARTIFACTS, 'playground.png')
    await page.screenshot({ path: file, fullPage: true })
    expect(existsSync(file)).toBe(true)
    expect(pageErrors).toEqual([])
  })
})
