// The built playground in a real browser: Debian's Chromium, driven by playwright-core. Skips
// where Chromium is not installed, except in CI (CI set), where it must be (.ci/run installs it).
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import { createRequire } from 'node:module'
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
/** axe-core's browser build, injected into the page to audit it. */
const AXE = createRequire(import.meta.url).resolve('axe-core/axe.min.js')
const DESKTOP = { width: 1280, height: 800 }
const PHONE = { width: 390, height: 844 }
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

  /** The opening page at `size`, its first chart drawn. */
  async function openAt(size: { width: number; height: number }) {
    await page.setViewportSize(size)
    await page.goto(server.url)
    await page.locator('[data-testid="admitted"]').nth(3).waitFor()
    await page.locator('#chart svg').waitFor()
  }

  /** The serious and critical violations axe finds, as "rule: target" lines. */
  async function accessibilityViolations(): Promise<string[]> {
    await page.addScriptTag({ path: AXE })
    const found = await page.evaluate(async () => {
      const axe = (globalThis as unknown as { axe: { run(): Promise<AxeResults> } }).axe
      type AxeResults = {
        violations: Array<{ id: string; impact: string; nodes: Array<{ target: string[] }> }>
      }
      return (await axe.run()).violations
    })
    return found
      .filter((v) => v.impact === 'serious' || v.impact === 'critical')
      .flatMap((v) => v.nodes.map((node) => `${v.id}: ${node.target.join(' ')}`))
  }

  it('shows the first chart above the fold at 1280 × 800', async () => {
    await openAt(DESKTOP)
    const chart = await page.locator('#chart svg').boundingBox()
    expect(chart).not.toBeNull()
    // Its top, and most of it, inside the first screen.
    expect(chart!.y).toBeLessThan(DESKTOP.height / 2)
    expect(chart!.y + chart!.height / 2).toBeLessThan(DESKTOP.height)
  })

  it('fits a 390 px phone screen without scrolling sideways', async () => {
    await openAt(PHONE)
    const width = await page.evaluate(() => document.documentElement.scrollWidth)
    expect(width).toBeLessThanOrEqual(PHONE.width)
  })

  it.each([
    ['1280 × 800', DESKTOP],
    ['390 px', PHONE],
  ])('has no serious accessibility violations at %s (axe)', async (_name, size) => {
    await openAt(size)
    expect(await accessibilityViolations()).toEqual([])
  })

  it('works from the keyboard: a field of a lane is reached with Tab and edited', async () => {
    await openAt(DESKTOP)
    const burst = page.locator('[data-lane="3"] input[data-field="burst"]')
    await burst.focus()
    await page.keyboard.press('Shift+Tab')
    await page.keyboard.press('Tab')
    expect(await burst.evaluate((node) => node === document.activeElement)).toBe(true)
    await page.keyboard.press('Control+A')
    await page.keyboard.type('50')
    await expect.poll(admitted).not.toEqual(['200', '100', '116', '133'])
  })

  it('saves screenshots at both widths for CI', async () => {
    mkdirSync(ARTIFACTS, { recursive: true })
    for (const [name, size] of [
      ['playground.png', DESKTOP],
      ['playground-phone.png', PHONE],
    ] as const) {
      await openAt(size)
      const file = join(ARTIFACTS, name)
      await page.screenshot({ path: file, fullPage: true })
      expect(existsSync(file)).toBe(true)
    }
    expect(pageErrors).toEqual([])
  })
})
