// docs/metrics.md lists every metric the processes register, and only those: every registry factory is run on a
// fresh registry (the kube layer's with both prefixes), and metric names written inline in src/ are collected too;
// the Node process metrics it names are the ones createRegistry() serves.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { Registry } from 'prom-client';
import { controllerMetrics } from '../../../src/controller/shared/metrics.js';
import { criMetrics } from '../../../src/cri/metrics.js';
import { crrMetrics } from '../../../src/daemon/containerrecreate/metrics.js';
import { imagePullMetrics } from '../../../src/daemon/imagepuller/metrics.js';
import { ipamMetrics } from '../../../src/daemon/ipreservation/metrics.js';
import { launchPriorityMetrics } from '../../../src/daemon/launchpriority/metrics.js';
import { kubeMetrics } from '../../../src/kube/metrics.js';
import { createRegistry } from '../../../src/observability/metrics.js';
import { packageRoot } from '../../../src/util/repo-root.js';

const root = packageRoot();

async function registered(): Promise<Set<string>> {
  const registry = new Registry();
  ipamMetrics(registry);
  imagePullMetrics(registry);
  launchPriorityMetrics(registry);
  crrMetrics(registry);
  criMetrics(registry);
  kubeMetrics(registry, 'kruise_daemon_');
  kubeMetrics(registry, 'kruise_controller_');
  controllerMetrics(registry);
  return new Set((await registry.getMetricsAsJSON()).map((m) => m.name));
}

/** Whole metric names written as string literals anywhere in src/ (metrics created outside a factory). */
function inlineNames(): Set<string> {
  const names = new Set<string>();
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir)) {
      const path = join(dir, entry);
      if (statSync(path).isDirectory()) walk(path);
      else if (entry.endsWith('.ts')) {
        for (const m of readFileSync(path, 'utf8').matchAll(
          /['"`](kruise_(?:daemon|controller)_[a-z0-9_]*[a-z0-9])['"`]/g,
        )) {
          names.add(m[1]!);
        }
      }
    }
  };
  walk(join(root, 'src'));
  return names;
}

describe('docs/metrics.md', () => {
  it('lists every metric, and none that is gone', async () => {
    const doc = readFileSync(join(root, 'docs', 'metrics.md'), 'utf8');
    const documented = new Set([...doc.matchAll(/`(kruise_(?:daemon|controller)_[a-z0-9_]+)/g)].map((m) => m[1]!));
    const known = new Set([...(await registered()), ...inlineNames()]);
    assert.ok(known.size > 40, `${known.size} metrics found`);
    for (const name of known) assert.ok(documented.has(name), `${name} is in docs/metrics.md`);
    for (const name of documented) assert.ok(known.has(name), `${name} is documented but no longer exists`);
  });

  it("names the process metrics as both processes serve them: prom-client's own, unprefixed", async () => {
    const doc = readFileSync(join(root, 'docs', 'metrics.md'), 'utf8');
    const served = new Set((await createRegistry({ processMetrics: true }).getMetricsAsJSON()).map((m) => m.name));
    for (const name of served) assert.match(name, /^(process|nodejs)_/);
    const named = [...doc.matchAll(/`((?:process|nodejs)_[a-z0-9_]+)`/g)].map((m) => m[1]!);
    assert.ok(named.length >= 3, 'docs/metrics.md names some');
    for (const name of named) assert.ok(served.has(name), `${name} is served`);
  });
});
