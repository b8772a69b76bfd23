#!/usr/bin/env node
// The installed entry point: the compiled composition root, bundled (src/release/bundle.ts; built by `npm run build`,
// which `npm ci` runs via `prepare`).
import { main } from '../dist/bundle/cli.js';

process.exitCode = await main(process.argv.slice(2));
