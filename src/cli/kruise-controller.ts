#!/usr/bin/env node
// The kruise-controller binary: everything lives in src/controller (main.ts).
import { runController } from '../controller/main.js';
import { exitWithStatusOf } from './exit-with-status.js';

await exitWithStatusOf('kruise-controller', runController);
