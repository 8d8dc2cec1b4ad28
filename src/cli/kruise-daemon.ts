#!/usr/bin/env node
// The kruise-daemon binary: `kruise-daemon [flags]` runs the node agent, `kruise-daemon <command> ...` a tool.
// Everything but the choice lives in src/daemon (commands.ts has the table, main.ts the agent).
import { dispatch } from '../daemon/commands.js';
import { exitWithStatusOf } from './exit-with-status.js';

await exitWithStatusOf('kruise-daemon', dispatch);
