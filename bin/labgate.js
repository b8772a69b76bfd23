#!/usr/bin/env node
// The installed entry point: the compiled composition root (built by `npm run build`, which `npm ci` runs via `prepare`).
import { main } from '../dist/src/cli.js';

process.exitCode = await main(process.argv.slice(2));
