// `pnpm size`: the bundle sizes test/bundle-size enforces, beside the peers' (same bundler
// options, from the built packages); `--inputs` lists what weighs most in each bundle.
import {
  type BundleSize,
  FIXTURES,
  heaviestInputs,
  measure,
  measureEntry,
} from '../../test/bundle-size/measure.js'

const PEERS = ['hono-rate-limiter', 'upstash-ratelimit'] as const

const kb = (bytes: number) => `${(bytes / 1024).toFixed(1)} KB`
const bare = await measure('hono-bare')

function print(name: string, size: BundleSize, overBare: boolean) {
  const added = overBare
    ? `  (+${kb(size.minified - bare.minified)} / +${kb(size.gzip - bare.gzip)} over bare Hono)`
    : ''
  console.log(`${name.padEnd(18)} ${kb(size.minified)} minified, ${kb(size.gzip)} gzip${added}`)
  if (!process.argv.includes('--inputs')) return
  for (const [path, bytes] of heaviestInputs(size, 15)) {
    console.log(`    ${String(bytes).padStart(6)}  ${path}`)
  }
}

for (const fixture of FIXTURES) {
  print(fixture, await measure(fixture), fixture.startsWith('hono-') && fixture !== 'hono-bare')
}
for (const peer of PEERS) {
  print(peer, await measureEntry(new URL(`./fixtures/${peer}.ts`, import.meta.url)), true)
}
