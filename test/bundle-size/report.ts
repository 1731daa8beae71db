// `pnpm size`: prints the bundle sizes the budget test enforces, and what weighs most.
import { FIXTURES, heaviestInputs, measure } from './measure.js'

const kb = (bytes: number) => `${(bytes / 1024).toFixed(1)} KB`
const bare = await measure('hono-bare')
for (const fixture of FIXTURES) {
  const size = await measure(fixture)
  const over = fixture.startsWith('hono-') && fixture !== 'hono-bare'
  const added = over
    ? `  (+${kb(size.minified - bare.minified)} / +${kb(size.gzip - bare.gzip)} over bare Hono)`
    : ''
  console.log(`${fixture.padEnd(16)} ${kb(size.minified)} minified, ${kb(size.gzip)} gzip${added}`)
  if (process.argv.includes('--inputs')) {
    for (const [path, bytes] of heaviestInputs(size, 15))
      console.log(`    ${String(bytes).padStart(6)}  ${path}`)
  }
}
