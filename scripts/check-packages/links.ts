/**
 * Every link in a packed README must open for someone who installed the package: a page of the
 * docs site (checked against the site CI just built, anchors included), a file inside the
 * tarball, another public package on npm, a file of the repository, or a heading of the README.
 */
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import type { Project } from './manifest.js'
import type { PublicPackage } from './workspace.js'

/** The docs site: its public URL and the folder its build wrote. */
export type Site = { url: string; dist: string }

export function readmeLinkProblems(
  pkg: PublicPackage,
  all: PublicPackage[],
  project: Project,
  site: Site,
): string[] {
  const readme = join(pkg.unpacked, 'README.md')
  if (!existsSync(readme)) return []
  const text = readFileSync(readme, 'utf8')
  const repository = project.repository.replace(/^git\+/, '').replace(/\.git$/, '')
  const problems: string[] = []
  for (const href of linksIn(text)) {
    const problem = linkProblem(href, { pkg, all, repository, site, text, root: project.root })
    if (problem !== undefined) problems.push(`README links to ${href}: ${problem}`)
  }
  return problems
}

type Context = {
  pkg: PublicPackage
  all: PublicPackage[]
  repository: string
  site: Site
  text: string
  root: string
}

function linkProblem(href: string, context: Context): string | undefined {
  const [target = '', anchor] = href.split('#')
  if (target === '') {
    return headingSlugs(context.text).has(anchor ?? '') ? undefined : 'no such heading'
  }
  if (href.startsWith(context.site.url)) return sitePageProblem(target, anchor, context.site)
  const npm = /^https:\/\/www\.npmjs\.com\/package\/(.+)$/.exec(target)
  if (npm !== null) {
    return context.all.some((pkg) => pkg.name === npm[1]) ? undefined : 'not a public package'
  }
  if (target === context.repository) return undefined
  const inRepository = new RegExp(`^${context.repository}/(?:blob|tree)/main/(.+)$`).exec(target)
  if (inRepository !== null) {
    return existsSync(join(context.root, inRepository[1]!)) ? undefined : 'not in the repository'
  }
  if (/^https:\/\//.test(target)) return undefined
  if (/^[a-z]+:/.test(target)) return 'not an https link'
  return existsSync(join(context.pkg.unpacked, target))
    ? undefined
    : 'a relative path to a file the tarball does not hold'
}

function sitePageProblem(target: string, anchor: string | undefined, site: Site) {
  const page = target.slice(site.url.length).replace(/\/$/, '')
  const candidates = page === '' ? ['index.html'] : [`${page}.html`, `${page}/index.html`]
  const file = candidates.map((name) => join(site.dist, name)).find((path) => existsSync(path))
  if (file === undefined) return 'no such page on the docs site'
  if (anchor !== undefined && !readFileSync(file, 'utf8').includes(`id="${anchor}"`)) {
    return `the page has no #${anchor}`
  }
  return undefined
}

/** Links outside code: Markdown `[text](href)` and HTML `href="…"`. */
export function linksIn(markdown: string): string[] {
  const prose = markdown.replace(/^```[\s\S]*?^```/gm, '').replace(/`[^`\n]*`/g, '')
  const links = [...prose.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)].map((m) => m[1]!)
  const hrefs = [...prose.matchAll(/href="([^"]+)"/g)].map((m) => m[1]!)
  return [...links, ...hrefs]
}

/** Heading anchors as GitHub and npm make them. */
function headingSlugs(markdown: string): Set<string> {
  const prose = markdown.replace(/^```[\s\S]*?^```/gm, '')
  const headings = [...prose.matchAll(/^#{1,6}\s+(.+)$/gm)].map((m) => m[1]!)
  return new Set(
    headings.map((heading) =>
      heading
        .toLowerCase()
        .replace(/[^\p{L}\p{N}\s_-]/gu, '')
        .replace(/\s/g, '-'),
    ),
  )
}
