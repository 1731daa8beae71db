/** `864,000`, `1.67`, `0.116`: whole numbers grouped, fractions to 3 significant digits. */
export function amount(value: number): string {
  if (Number.isInteger(value)) return value.toLocaleString('en-US')
  if (value >= 100) return Math.round(value).toLocaleString('en-US')
  return String(Number(value.toPrecision(3)))
}

/** `24 B`, `3.4 KiB`, `61 MiB`. */
export function bytes(value: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB']
  let scaled = value
  let unit = 0
  while (scaled >= 1024 && unit < units.length - 1) {
    scaled /= 1024
    unit++
  }
  const shown = unit === 0 || scaled >= 10 ? Math.round(scaled) : Number(scaled.toFixed(1))
  return `${shown} ${units[unit]}`
}

/** `12:00:50.100`-style offsets are long; a trace's times read as seconds: `50.1 s`. */
export function seconds(ms: number): string {
  return `${Number((ms / 1000).toFixed(3))} s`
}

/** Pads every column but the last to its widest cell, numbers (right-aligned) included. */
export function table(rows: readonly (readonly string[])[]): string[] {
  const widths: number[] = []
  for (const cells of rows) {
    cells.forEach((cell, i) => {
      widths[i] = Math.max(widths[i] ?? 0, cell.length)
    })
  }
  return rows.map((cells) =>
    cells
      .map((cell, i) => {
        if (i === cells.length - 1) return cell
        const width = widths[i] ?? 0
        return /^[\d.,]+( [A-Za-z]+)?$/.test(cell) && i > 0
          ? cell.padStart(width)
          : cell.padEnd(width)
      })
      .join('  ')
      .trimEnd(),
  )
}

const UNITS: Array<[number, string]> = [
  [86_400_000, 'day'],
  [3_600_000, 'h'],
  [60_000, 'min'],
  [1000, 's'],
]

/** `1 day`, `2 days`, `60 s` → `1 min`, `1500 ms`: the largest unit that divides it. */
export function duration(ms: number): string {
  for (const [size, unit] of UNITS) {
    if (ms % size === 0) {
      const count = ms / size
      return `${count.toLocaleString('en-US')} ${unit}${unit === 'day' && count !== 1 ? 's' : ''}`
    }
  }
  return `${ms} ms`
}
