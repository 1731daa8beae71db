import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { createLimiter } from '../limiter/create-limiter.js'
import type { Limiter, Verdict } from '../limiter/types.js'
import { loadRulesText } from '../rules/load-text.js'
import type { Timers } from '../wait/scheduler.js'
import { type RulesFileSystem, type RulesReload, watchRulesFile } from './rules-file-watcher.js'

/** Timers that fire only when the test moves them: `advance(ms)` runs what falls due. */
function manualTimers() {
  let now = 0
  let nextId = 1
  const armed = new Map<number, { at: number; run: () => void }>()
  const timers: Timers = {
    setTimeout(run, ms) {
      armed.set(nextId, { at: now + ms, run })
      return nextId++
    },
    clearTimeout: (handle) => void armed.delete(handle as number),
  }
  return {
    timers,
    armed: () => armed.size,
    advance(ms: number) {
      const until = now + ms
      for (;;) {
        const due = [...armed].filter(([, t]) => t.at <= until).sort((a, b) => a[1].at - b[1].at)
        if (due.length === 0) break
        const [id, timer] = due[0]!
        armed.delete(id)
        now = timer.at
        timer.run()
      }
      now = until
    },
  }
}

const yaml = (limit: number, id = 'per-ip') => `rules:
  - id: ${id}
    match: { identity: ip }
    algorithm: fixed_window
    limit: ${limit}
    window: 1m
`
const facts = { method: 'GET', path: '/', identities: { ip: '192.0.2.1' } }

let dir: string
let file: string
let limiter: Limiter
let warnings: string[]
let reloads: RulesReload[]

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'tollgate-rules-'))
  file = join(dir, 'rules.yaml')
  writeFileSync(file, yaml(5))
  limiter = createLimiter({
    rules: [
      {
        id: 'per-ip',
        match: { identity: 'ip' },
        algorithm: 'fixed_window',
        limit: 5,
        window: '1m',
      },
    ],
    clock: { now: () => 0 },
  })
  warnings = []
  reloads = []
})
afterEach(() => rmSync(dir, { recursive: true, force: true }))

const logger = { warn: (line: string) => void warnings.push(line) }
const onReload = (reload: RulesReload) => void reloads.push(reload)
/** The file read as it is when asked, its promise settled by `settle()` (no real wait). */
const files = (watch: RulesFileSystem['watch'] = () => ({ close() {} })): RulesFileSystem => ({
  readFile: async (path) => readFileSync(path, 'utf8'),
  watch,
})
/** Lets the promise callbacks of a read and an update run. */
const settle = async () => {
  for (let i = 0; i < 20; i++) await Promise.resolve()
}
const limitNow = () => (limiter.decide(facts) as Verdict).decisions[0]!.limit

describe('watchRulesFile', () => {
  it('polling: loads the file once it has been quiet for debounceMs after a look saw it change', async () => {
    const time = manualTimers()
    const watcher = watchRulesFile(limiter, file, {
      load: loadRulesText,
      pollMs: 1000,
      debounceMs: 200,
      timers: time.timers,
      files: files(),
      logger,
      onReload,
    })
    await settle() // the baseline read
    time.advance(1000) // a look: the same text, nothing to do
    await settle()
    writeFileSync(file, yaml(50))
    time.advance(1000) // a look sees the change and waits for quiet
    await settle()
    expect(reloads).toEqual([])
    time.advance(200)
    await settle()
    expect(reloads).toEqual([
      {
        outcome: 'applied',
        update: { added: [], removed: [], changed: ['per-ip'], unchanged: [] },
      },
    ])
    expect(limitNow()).toBe(50)
    // Later looks at the same text load nothing.
    time.advance(5000)
    await settle()
    expect(reloads).toHaveLength(1)
    watcher.close()
  })

  it('change events: a burst is read once, after debounceMs of quiet', async () => {
    let reads = 0
    let changed = () => {}
    const time = manualTimers()
    const watcher = watchRulesFile(limiter, file, {
      load: loadRulesText,
      debounceMs: 250,
      timers: time.timers,
      files: {
        readFile: async (path) => {
          reads++
          return readFileSync(path, 'utf8')
        },
        watch: (_path, onChange) => {
          changed = onChange
          return { close() {} }
        },
      },
      onReload,
    })
    writeFileSync(file, yaml(7))
    for (let i = 0; i < 5; i++) {
      changed()
      time.advance(100) // each event re-arms the quiet time
    }
    await settle()
    expect(reads).toBe(0)
    time.advance(150)
    await settle()
    expect(reads).toBe(1)
    expect(limitNow()).toBe(7)
    // An event for the same text: read, not loaded.
    changed()
    time.advance(250)
    await settle()
    expect(reads).toBe(2)
    expect(reloads.map((r) => r.outcome)).toEqual(['applied'])
    watcher.close()
  })

  it('refuses a file that fails validation whole: the running rules stay, logged and counted', async () => {
    let changed = () => {}
    const time = manualTimers()
    const watcher = watchRulesFile(limiter, file, {
      load: loadRulesText,
      debounceMs: 0,
      timers: time.timers,
      files: files((_path, onChange) => {
        changed = onChange
        return { close() {} }
      }),
      logger,
      onReload,
    })
    const change = async (text: string) => {
      writeFileSync(file, text)
      changed()
      time.advance(0)
      await settle()
    }
    await change(yaml(50).replace('limit: 50', 'limit: -1'))
    expect(reloads[0]).toMatchObject({ outcome: 'refused' })
    expect(String((reloads[0] as { error: unknown }).error)).toMatch(/per-ip.*limit/s)
    expect(watcher.refused).toBe(1)
    expect(limitNow()).toBe(5)
    expect(warnings).toEqual([
      expect.stringMatching(
        /^\[tollgate\] WARN_RULES_FILE_REFUSED: .*rules\.yaml was not loaded; the running rules stay: /,
      ),
    ])
    // Not valid YAML: refused the same way.
    await change('rules: [')
    expect(watcher.refused).toBe(2)
    expect(limitNow()).toBe(5)
    // Fixed: taken.
    await change(yaml(9))
    expect(limitNow()).toBe(9)
    expect(watcher.refused).toBe(2)
    expect(reloads.map((r) => r.outcome)).toEqual(['refused', 'refused', 'applied'])
    watcher.close()
  })

  it('refuses a file it cannot read, and counts it', async () => {
    const watcher = watchRulesFile(limiter, join(dir, 'missing.yaml'), {
      load: loadRulesText,
      files: files(),
      logger,
    })
    const reload = await watcher.reload()
    expect(reload).toMatchObject({ outcome: 'refused' })
    expect(watcher.refused).toBe(1)
    expect(warnings[0]).toMatch(/missing\.yaml was not loaded/)
    watcher.close()
  })

  it('reloads on demand, whatever the file’s text was (Node’s own fs reads it)', async () => {
    // Watching the directory with fs.watch: its events are the system's, not waited for here.
    const watcher = watchRulesFile(limiter, file, { load: loadRulesText })
    writeFileSync(file, `${yaml(3)}${yaml(1, 'other').split('rules:\n')[1]}`)
    expect(await watcher.reload()).toEqual({
      outcome: 'applied',
      update: { added: ['other'], removed: [], changed: ['per-ip'], unchanged: [] },
    })
    expect(await watcher.reload()).toMatchObject({ outcome: 'applied' })
    watcher.close()
  })

  it('stops cleanly: close disarms its timers and the watch, and no change reloads after it', async () => {
    const time = manualTimers()
    const watcher = watchRulesFile(limiter, file, {
      load: loadRulesText,
      pollMs: 1000,
      timers: time.timers,
      files: files(),
      onReload,
    })
    await settle()
    writeFileSync(file, yaml(50))
    time.advance(1000) // a look sees the change and arms the debounce
    await settle()
    expect(time.armed()).toBe(2) // the debounce and the next look
    watcher.close()
    expect(time.armed()).toBe(0)
    time.advance(10_000)
    await settle()
    expect(reloads).toEqual([])
    expect(limitNow()).toBe(5)
    let watching = true
    const closing = watchRulesFile(limiter, file, {
      load: loadRulesText,
      files: files(() => ({
        close: () => {
          watching = false
        },
      })),
    })
    closing.close()
    closing.close()
    expect(watching).toBe(false)
  })

  it('refuses bad options and targets at once, naming them', () => {
    const load = loadRulesText
    expect(() => watchRulesFile({} as never, file, { load })).toThrow(/update\(rules\)/)
    expect(() => watchRulesFile(limiter, '', { load })).toThrow(/path/)
    expect(() => watchRulesFile(limiter, file, {} as never)).toThrow(/load: expected loadRulesText/)
    expect(() => watchRulesFile(limiter, file, { load, debounceMs: -1 })).toThrow(/debounceMs/)
    expect(() => watchRulesFile(limiter, file, { load, pollMs: Number.NaN })).toThrow(/pollMs/)
  })
})
