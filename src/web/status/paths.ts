// The status page's URLs, shared by the renderer (forms, links) and the routes.

/** Every path the status page serves. */
export const paths = {
  page: '/',
  fragment: '/fragment',
  json: '/status.json',
  /** Further pages of an instrument's codes (`?instrument=ID&page=N`), as a page and as JSON. */
  codes: '/codes',
  codesJson: '/codes.json',
  css: '/status.css',
  js: '/status.js',
  login: '/login',
  logout: '/logout',
  retryDeadLetter: '/actions/retry-dead-letter',
  resolveConflict: '/actions/resolve-conflict',
  reprocessCapture: '/actions/reprocess-capture',
  configure: '/configure',
  configureAdd: '/configure/add',
  configureInstrument: '/configure/instrument',
  configureMapping: '/configure/mapping',
  configurePreview: '/configure/preview',
  configureApply: '/configure/apply',
  configureReprocess: '/configure/reprocess',
  configureUnlock: '/configure/unlock',
  configureLock: '/configure/lock',
} as const;
