/**
 * Handlers that hold their request until the test lets it go: each request names a gate
 * (`/block/a`), the handler reports it has started and waits for `open('a')`. Nothing waits
 * for time.
 */
export class Gates {
  private readonly entries = new Map<string, Gate>()

  private gate(name: string): Gate {
    let gate = this.entries.get(name)
    if (gate === undefined) {
      gate = new Gate()
      this.entries.set(name, gate)
    }
    return gate
  }

  /** Called by a handler: reports it runs, resolves when the test opens the gate. */
  enter(name: string): Promise<void> {
    const gate = this.gate(name)
    gate.markStarted()
    return gate.opened
  }

  /** Resolves once a handler has entered the gate `name`. */
  started(name: string): Promise<void> {
    return this.gate(name).started
  }

  open(name: string): void {
    this.gate(name).open()
  }
}

class Gate {
  readonly started: Promise<void>
  readonly opened: Promise<void>
  markStarted!: () => void
  open!: () => void

  constructor() {
    this.started = new Promise((resolve) => {
      this.markStarted = resolve
    })
    this.opened = new Promise((resolve) => {
      this.open = resolve
    })
  }
}

/** What a gated path asks the handler to do: answer, throw, or stream around the gate. */
export type Behaviour = 'block' | 'throw' | 'stream' | 'replace'

/** `/block/a` → ['block', 'a']; anything else is answered at once. */
export function gatedPath(path: string): [Behaviour, string] | undefined {
  const match = /^\/(block|throw|stream|replace)\/([\w-]+)$/.exec(path)
  return match === null ? undefined : [match[1] as Behaviour, match[2]!]
}
