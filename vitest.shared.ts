// Every test project resolves workspace packages to their TypeScript sources, so tests never
// need a build. No 'import' condition here: Vite would apply it to require() calls too, and
// CJS dependencies of dual packages (router's require('is-promise') under Express 5) would get an
// ES module namespace instead of the function.
export const sourceConditions = {
  resolve: { conditions: ['@tollgate/source', 'module', 'node', 'default'] },
  ssr: { resolve: { conditions: ['@tollgate/source', 'module', 'node', 'default'] } },
}
