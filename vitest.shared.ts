// Every test project resolves workspace packages to their TypeScript sources, so tests never
// need a build.
export const sourceConditions = {
  resolve: { conditions: ['@tollgate/source', 'module', 'node', 'import', 'default'] },
  ssr: { resolve: { conditions: ['@tollgate/source', 'module', 'node', 'import', 'default'] } },
}
