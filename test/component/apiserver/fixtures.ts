// emulator: the subject under test (the emulator's own component tests)
// Fixtures of the API emulator's tests: the Widget test CRD and objects built on it.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { load } from 'js-yaml';
import { packageRoot } from '../../../src/util/repo-root.js';

export const FIXTURES = join(packageRoot(), 'test', 'fixtures', 'apiserver');

export function widgetCrd(): any {
  return load(readFileSync(join(FIXTURES, 'widgets-crd.yaml'), 'utf8'));
}

export const WIDGETS = '/apis/test.kruise.io/v1/namespaces/default/widgets';

export function widget(name: string, spec: Record<string, unknown> = {}, labels: Record<string, string> = {}): any {
  return {
    apiVersion: 'test.kruise.io/v1',
    kind: 'Widget',
    metadata: { name, labels },
    spec: { image: 'busybox', ...spec },
  };
}

export function configMap(name: string, extra: Record<string, unknown> = {}): any {
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, ...extra }, data: { k: 'v' } };
}
