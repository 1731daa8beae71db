/**
 * Waiting for what a test counts without polling on a timer: `until(assertion)` runs the
 * assertion now and again after each `changed()` (called by the store, timers or client the test
 * wraps) and resolves once it passes. Nothing sleeps: it resolves on the turn of the event that
 * makes the assertion true. Only if that event never comes does it fail, after `timeoutMs`, with
 * the assertion's own last error (what was expected and what was seen).
 */
export function changes() {
  const waiters = new Set<() => void>()
  return {
    /** Something an awaited assertion reads may have changed: run them again once it settles. */
    changed() {
      // After the caller's own turn, so a store that counts before it answers is read after.
      if (waiters.size === 0) return
      setImmediate(() => {
        for (const check of [...waiters]) void check()
      })
    },
    until(assertion: () => void | Promise<void>, timeoutMs = 10_000): Promise<void> {
      return new Promise<void>((resolve, reject) => {
        let lastError: unknown
        let running = false
        let again = false
        const finish = (error?: unknown) => {
          waiters.delete(check)
          clearTimeout(timer)
          if (error === undefined) resolve()
          else reject(error)
        }
        async function check(): Promise<void> {
          if (running) {
            again = true
            return
          }
          running = true
          try {
            await assertion()
            finish()
          } catch (error) {
            lastError = error
            running = false
            if (again) {
              again = false
              void check()
            }
          }
        }
        // As vi.waitFor does: the assertion's last error, with what was expected and seen.
        const timer = setTimeout(
          () => finish(lastError ?? new Error(`not true within ${timeoutMs} ms`)),
          timeoutMs,
        )
        waiters.add(check)
        void check()
      })
    },
  }
}
