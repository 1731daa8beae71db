// prepublishOnly of every public package: npm would publish `workspace:^` ranges as written,
// and the tarball could not be installed; pnpm rewrites them to the versions. Refuse the others.
const { npm_config_user_agent: agent = '' } = process.env
if (!agent.startsWith('pnpm/')) {
  console.error(
    `Publish with pnpm (pnpm release, or pnpm publish), not ${agent.split(' ')[0] || 'this tool'}: ` +
      'it rewrites the workspace: ranges to the published versions.',
  )
  process.exit(1)
}
