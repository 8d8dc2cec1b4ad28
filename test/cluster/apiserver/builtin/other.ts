// Non-core built-in kinds: Lease, apps/v1 StatefulSet and Deployment, admission webhook configurations.
import { ageOf } from '../age.js';
import { fieldError, fieldPath, type FieldError } from '../field-errors.js';
import { labelSelectorErrors, labelSelectorObjectMatches } from '../selectors.js';
import { ageColumn, column, nameColumn, type TableConverter } from '../table.js';
import { isPlainObject, type KubeObject } from '../types.js';
import { builtinResource, dig, ensureObject, str } from './meta.js';

export const leaseResource = builtinResource({
  group: 'coordination.k8s.io',
  version: 'v1',
  kind: 'Lease',
  plural: 'leases',
  namespaced: true,
  table: {
    columns: [nameColumn, column('Holder', 'string'), ageColumn],
    cells: (o, now) => [
      o.metadata.name ?? '',
      str(dig(o, 'spec', 'holderIdentity')) ?? '',
      ageOf(o.metadata.creationTimestamp, now),
    ],
  },
});

function containerSummary(o: KubeObject, key: 'name' | 'image'): string {
  const containers = dig(o, 'spec', 'template', 'spec', 'containers');
  if (!Array.isArray(containers)) return '';
  return containers.map((c) => str(dig(c, key)) ?? '').join(',');
}

function num(o: KubeObject, ...path: string[]): number {
  const v = dig(o, ...path);
  return typeof v === 'number' ? v : 0;
}

/** selector required, template labels must match it, replicas ≥ 0. */
function validateWorkload(o: KubeObject, old: KubeObject | undefined): FieldError[] {
  const errs: FieldError[] = [];
  const spec = o.spec;
  if (!isPlainObject(spec)) return [fieldError.required('spec')];
  const selector = spec.selector;
  if (!isPlainObject(selector)) {
    errs.push(fieldError.required('spec.selector'));
  } else {
    errs.push(...labelSelectorErrors(selector, 'spec.selector'));
    const labels = dig(spec, 'template', 'metadata', 'labels');
    if (!labelSelectorObjectMatches(selector, isPlainObject(labels) ? (labels as Record<string, string>) : {})) {
      errs.push(
        fieldError.invalid(
          'spec.template.metadata.labels',
          labels ?? {},
          '`selector` does not match template `labels`',
        ),
      );
    }
    if (old && JSON.stringify(dig(old, 'spec', 'selector')) !== JSON.stringify(selector)) {
      errs.push(fieldError.invalid('spec.selector', selector, 'field is immutable'));
    }
  }
  const replicas = spec.replicas;
  if (replicas !== undefined && (typeof replicas !== 'number' || !Number.isInteger(replicas) || replicas < 0)) {
    errs.push(fieldError.invalid('spec.replicas', replicas, 'must be greater than or equal to 0'));
  }
  const containers = dig(spec, 'template', 'spec', 'containers');
  if (!Array.isArray(containers) || containers.length === 0) {
    errs.push(fieldError.required('spec.template.spec.containers'));
  }
  return errs;
}

const statefulSetTable: TableConverter = {
  columns: [
    nameColumn,
    column('Ready', 'string'),
    ageColumn,
    column('Containers', 'string', 1),
    column('Images', 'string', 1),
  ],
  cells: (o, now) => [
    o.metadata.name ?? '',
    `${num(o, 'status', 'readyReplicas')}/${num(o, 'spec', 'replicas')}`,
    ageOf(o.metadata.creationTimestamp, now),
    containerSummary(o, 'name'),
    containerSummary(o, 'image'),
  ],
};

export const statefulSetResource = builtinResource({
  group: 'apps',
  version: 'v1',
  kind: 'StatefulSet',
  plural: 'statefulsets',
  namespaced: true,
  shortNames: ['sts'],
  categories: ['all'],
  subresources: ['status'],
  table: statefulSetTable,
  behaviour: {
    tracksGeneration: true,
    prepareForCreate(o) {
      const spec = ensureObject(o, 'spec');
      spec.replicas ??= 1;
      spec.podManagementPolicy ??= 'OrderedReady';
      spec.updateStrategy ??= { type: 'RollingUpdate', rollingUpdate: { partition: 0 } };
      spec.revisionHistoryLimit ??= 10;
      o.status = { replicas: 0, availableReplicas: 0 };
    },
    validate: validateWorkload,
  },
});

const deploymentTable: TableConverter = {
  columns: [
    nameColumn,
    column('Ready', 'string'),
    column('Up-to-date', 'string'),
    column('Available', 'string'),
    ageColumn,
    column('Containers', 'string', 1),
    column('Images', 'string', 1),
    column('Selector', 'string', 1),
  ],
  cells: (o, now) => {
    const matchLabels = dig(o, 'spec', 'selector', 'matchLabels');
    return [
      o.metadata.name ?? '',
      `${num(o, 'status', 'readyReplicas')}/${num(o, 'spec', 'replicas')}`,
      String(num(o, 'status', 'updatedReplicas')),
      String(num(o, 'status', 'availableReplicas')),
      ageOf(o.metadata.creationTimestamp, now),
      containerSummary(o, 'name'),
      containerSummary(o, 'image'),
      isPlainObject(matchLabels)
        ? Object.entries(matchLabels)
            .map(([k, v]) => `${k}=${String(v)}`)
            .join(',')
        : '',
    ];
  },
};

export const deploymentResource = builtinResource({
  group: 'apps',
  version: 'v1',
  kind: 'Deployment',
  plural: 'deployments',
  namespaced: true,
  shortNames: ['deploy'],
  categories: ['all'],
  subresources: ['status'],
  table: deploymentTable,
  behaviour: {
    tracksGeneration: true,
    prepareForCreate(o) {
      const spec = ensureObject(o, 'spec');
      spec.replicas ??= 1;
      spec.strategy ??= { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: '25%', maxSurge: '25%' } };
      spec.revisionHistoryLimit ??= 10;
      spec.progressDeadlineSeconds ??= 600;
      o.status = {};
    },
    validate: validateWorkload,
  },
});

const SIDE_EFFECTS = ['None', 'NoneOnDryRun'];

function validateWebhooks(o: KubeObject): FieldError[] {
  const errs: FieldError[] = [];
  const hooks = o.webhooks;
  if (hooks === undefined) return errs;
  if (!Array.isArray(hooks)) return [fieldError.typeInvalid('webhooks', hooks, 'must be a list')];
  const names = new Set<string>();
  hooks.forEach((h, i) => {
    const path = fieldPath.index('webhooks', i);
    if (!isPlainObject(h)) {
      errs.push(fieldError.typeInvalid(path, h, 'must be an object'));
      return;
    }
    if (typeof h.name !== 'string' || h.name === '') errs.push(fieldError.required(`${path}.name`));
    else if (names.has(h.name)) errs.push(fieldError.duplicate(`${path}.name`, h.name));
    else names.add(h.name);
    const cc = h.clientConfig;
    if (!isPlainObject(cc) || (cc.url === undefined && cc.service === undefined)) {
      errs.push(fieldError.required(`${path}.clientConfig`, 'exactly one of url or service is required'));
    }
    if (!SIDE_EFFECTS.includes(String(h.sideEffects))) {
      errs.push(
        h.sideEffects === undefined
          ? fieldError.required(`${path}.sideEffects`, 'must specify one of None, NoneOnDryRun')
          : fieldError.notSupported(`${path}.sideEffects`, h.sideEffects, SIDE_EFFECTS),
      );
    }
    if (!Array.isArray(h.admissionReviewVersions) || h.admissionReviewVersions.length === 0) {
      errs.push(fieldError.required(`${path}.admissionReviewVersions`, 'must specify one of v1, v1beta1'));
    }
  });
  return errs;
}

function webhookConfig(kind: string, plural: string): ReturnType<typeof builtinResource> {
  return builtinResource({
    group: 'admissionregistration.k8s.io',
    version: 'v1',
    kind,
    plural,
    namespaced: false,
    categories: ['api-extensions'],
    table: {
      columns: [nameColumn, column('Webhooks', 'integer'), ageColumn],
      cells: (o, now) => [
        o.metadata.name ?? '',
        Array.isArray(o.webhooks) ? o.webhooks.length : 0,
        ageOf(o.metadata.creationTimestamp, now),
      ],
    },
    behaviour: {
      tracksGeneration: true,
      validate: validateWebhooks,
      prepareForCreate: defaultWebhooks,
      prepareForUpdate: defaultWebhooks,
    },
  });

  function defaultWebhooks(o: KubeObject): void {
    if (!Array.isArray(o.webhooks)) return;
    for (const h of o.webhooks) {
      if (!isPlainObject(h)) continue;
      h.failurePolicy ??= 'Fail';
      h.matchPolicy ??= 'Equivalent';
      h.timeoutSeconds ??= 10;
      h.namespaceSelector ??= {};
      h.objectSelector ??= {};
      if (kind === 'MutatingWebhookConfiguration') h.reinvocationPolicy ??= 'Never';
    }
  }
}

export const mutatingWebhookResource = webhookConfig('MutatingWebhookConfiguration', 'mutatingwebhookconfigurations');
export const validatingWebhookResource = webhookConfig(
  'ValidatingWebhookConfiguration',
  'validatingwebhookconfigurations',
);
