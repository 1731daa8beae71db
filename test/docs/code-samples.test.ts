/**
 * Every TypeScript sample in the READMEs and docs compiles in a fresh strict app, under each
 * module resolution an app may use: node16, bundler, and node10 (`"module": "commonjs"`, which
 * reads no exports map). Against the built packages, as a user installs them.
 */
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import ts from 'typescript'
import { describe, expect, it } from 'vitest'
import { markdownFiles, type Sample, samplesOf } from './code-samples.js'

const here = dirname(fileURLToPath(import.meta.url))
const root = join(here, '..', '..')
const samples = markdownFiles(root).flatMap((file) => samplesOf(root, file))

/** What `tsc --init` gives a new app, strict, per resolution. */
const FRESH_APP: ts.CompilerOptions = {
  strict: true,
  target: ts.ScriptTarget.ES2022,
  lib: ['lib.es2022.d.ts'],
  types: ['node'],
  esModuleInterop: true,
  skipLibCheck: true,
  noEmit: true,
  moduleDetection: ts.ModuleDetectionKind.Force,
}

const RESOLUTIONS: Record<string, ts.CompilerOptions> = {
  node16: { module: ts.ModuleKind.Node16, moduleResolution: ts.ModuleResolutionKind.Node16 },
  bundler: { module: ts.ModuleKind.ESNext, moduleResolution: ts.ModuleResolutionKind.Bundler },
  node10: { module: ts.ModuleKind.CommonJS, moduleResolution: ts.ModuleResolutionKind.Node10 },
}

/** A Worker's bindings, as `wrangler types` declares them for the samples that import them. */
const WORKER_BINDINGS = join(here, '..', 'cloudflare-workers.d.ts')

/** Compiles the samples as files beside this test (so that they resolve its dependencies). */
function compile(chosen: readonly Sample[], options: ts.CompilerOptions): string[] {
  const files = new Map(chosen.map((sample, i) => [join(here, `sample-${i}.ts`), sample]))
  const host = ts.createCompilerHost(options)
  const getSourceFile = host.getSourceFile.bind(host)
  host.getSourceFile = (name, version, ...rest) => {
    const sample = files.get(name)
    return sample === undefined
      ? getSourceFile(name, version, ...rest)
      : ts.createSourceFile(name, sample.code, version)
  }
  const fileExists = host.fileExists.bind(host)
  host.fileExists = (name) => files.has(name) || fileExists(name)
  const program = ts.createProgram([...files.keys(), WORKER_BINDINGS], options, host)
  return ts.getPreEmitDiagnostics(program).map((diagnostic) => {
    const sample = diagnostic.file && files.get(diagnostic.file.fileName)
    const message = ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n')
    if (sample === undefined || diagnostic.start === undefined) return message
    const { line } = diagnostic.file!.getLineAndCharacterOfPosition(diagnostic.start)
    const [file, first] = sample.where.split(':')
    return `${file}:${Number(first) + line}: TS${diagnostic.code}: ${message}`
  })
}

describe('code samples in the READMEs and docs', () => {
  it('are found, and each fragment is marked as one', () => {
    expect(samples.length).toBeGreaterThan(25)
    // Most samples must compile: marking everything a fragment would check nothing.
    const compiled = samples.filter((sample) => sample.kind !== 'fragment')
    expect(compiled.length).toBeGreaterThan(samples.length / 2)
  })

  it.each(Object.keys(RESOLUTIONS))(
    'compile in a fresh strict app with %s resolution',
    (name) => {
      const chosen = samples.filter(
        (sample) => sample.kind === 'module' || (sample.kind === 'esm' && name !== 'node10'),
      )
      expect(compile(chosen, { ...FRESH_APP, ...RESOLUTIONS[name] })).toEqual([])
    },
    120_000,
  )
})
