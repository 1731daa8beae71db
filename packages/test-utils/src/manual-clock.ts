/** A clock that only moves when a test moves it. */
export type ManualClock = {
  now(): number
  advance(ms: number): void
  set(ms: number): void
}

export function manualClock(start = 0): ManualClock {
  let time = start
  return {
    now: () => time,
    advance(ms) {
      time += ms
    },
    set(ms) {
      time = ms
    },
  }
}
