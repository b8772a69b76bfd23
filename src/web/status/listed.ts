// How much of a list that can be long the pages and /status.json show; beside it they say how many more there are.

/** Problems of a configuration listed at most: a broken file can have thousands, `labgate check-config` lists them all. */
export const PROBLEMS_LISTED = 20;
