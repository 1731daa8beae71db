/** The one project URL every manifest, README and page uses, and the site built from docs/. */
export const REPOSITORY_URL = 'https://github.com/tollgate/tollgate'
export const DOCS_URL = 'https://tollgate.github.io/tollgate/'
