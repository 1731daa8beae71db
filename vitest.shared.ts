// Every test project resolves workspace packages to their TypeScript sources, so tests never
// need a build. No 'import' condition here: Vite would apply it to require() calls too, and
// CJS dependencies of dual packages (router's require('is-promise') under Express 5) would get an
// ES module namespace instead of the function.
export const sourceConditions = {
  resolve: { conditions: ['@tollgate/source', 'module', 'node', 'default'] },
  ssr: { resolve: { conditions: ['@tollgate/source', 'module', 'node', 'default'] } },
}

/**
 * The test files of a project share their worker's modules (`isolate: false`) instead of each
 * importing every module afresh: the imports cost as much CPU as the tests of most unit files
 * (the core project took half the CPU time this way). So a test never counts on a module's
 * state being new: what is once per process (a warning) is tested on a copy imported after
 * `vi.resetModules()`, and whatever a test installs (fake timers, spies, listeners) it removes.
 */
export const sharedModules = { isolate: false }
