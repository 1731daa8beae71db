import { build } from 'esbuild'
import { gzipSync } from 'node:zlib'
const r = await build({ entryPoints: ['test/bundle-size/fixtures/hono-lean-one-rule.ts'], bundle: true, format: 'esm', platform: 'neutral',
  conditions: ['workerd','worker','browser'], mainFields: ['module','main'], target: 'es2022', minify: true, write: false, logLevel: 'silent' })
const code = r.outputFiles[0]!.text
const bare = await build({ entryPoints: ['test/bundle-size/fixtures/hono-bare.ts'], bundle: true, format: 'esm', platform: 'neutral',
  conditions: ['workerd','worker','browser'], mainFields: ['module','main'], target: 'es2022', minify: true, write: false, logLevel: 'silent' })
const strings = code.match(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`(?:[^`\\]|\\.)*`/g) ?? []
const bstrings = bare.outputFiles[0]!.text.match(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`(?:[^`\\]|\\.)*`/g) ?? []
const total = strings.reduce((a, s) => a + s.length, 0) - bstrings.reduce((a, s) => a + s.length, 0)
console.log('code', code.length, 'strings over bare', total)
const long = strings.filter((s) => s.length > 60).sort((a, b) => b.length - a.length)
console.log('long strings', long.length, long.reduce((a, s) => a + s.length, 0), 'gzip of them', gzipSync(long.join('')).length)
console.log(long.slice(0, 40).map(s=>s.slice(0,150)).join('\n'))
