/**
 * A trace the simulator cannot replay. `arrival` is the 0-based position of the arrival in the
 * trace (a parsed file's `line` is set too), `field` the field at fault.
 */
export class TraceError extends Error {
  override readonly name = 'TraceError'
  readonly arrival: number
  readonly field: string
  readonly line: number | undefined

  constructor(problem: string, arrival: number, field: string, line?: number) {
    super(
      `${line === undefined ? `arrival #${arrival + 1}` : `line ${line}`}: ${field}: ${problem}`,
    )
    this.arrival = arrival
    this.field = field
    this.line = line
  }
}
