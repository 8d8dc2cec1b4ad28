#!/usr/bin/env node
// kubectl-kruise-node: a kubectl plugin (`kubectl kruise-node ...` once this file is on PATH under that name).
// Everything lives in src/kubectl-plugin (main.ts).
import { runPlugin } from '../kubectl-plugin/main.js';
import { exitWithStatusOf } from './exit-with-status.js';

await exitWithStatusOf('kubectl kruise-node', runPlugin);
