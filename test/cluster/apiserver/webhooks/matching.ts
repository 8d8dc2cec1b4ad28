// Which registered webhooks a request reaches, as kube-apiserver decides it: rules by group/version/resource
// (with subresources)/operation and scope, namespaceSelector (the namespace's labels; for a Namespace its own
// labels; cluster-scoped objects always match) and objectSelector (the new or the old object's labels).
import { labelSelectorMatches } from '../../../../src/api/label-selector.js';
import type { LabelSelector } from '../../../../src/api/meta.js';
import type { AdmissionRequest } from '../admission.js';
import type { KubeObject } from '../types.js';

export interface RuleWithOperations {
  operations?: string[];
  apiGroups?: string[];
  apiVersions?: string[];
  resources?: string[];
  scope?: string;
}

export interface RegisteredWebhook {
  name: string;
  clientConfig?: {
    url?: string;
    service?: { namespace?: string; name?: string; path?: string; port?: number };
    caBundle?: string;
  };
  rules?: RuleWithOperations[];
  failurePolicy?: string;
  timeoutSeconds?: number;
  namespaceSelector?: LabelSelector;
  objectSelector?: LabelSelector;
  admissionReviewVersions?: string[];
}

const has = (list: string[] | undefined, value: string): boolean => (list ?? []).some((v) => v === '*' || v === value);

function resourceMatches(patterns: string[] | undefined, resource: string, subResource: string): boolean {
  return (patterns ?? []).some((pattern) => {
    const [res, sub] = pattern.split('/');
    if (sub === undefined) return subResource === '' && (res === '*' || res === resource);
    return (res === '*' || res === resource) && (sub === '*' || sub === subResource);
  });
}

export function ruleMatches(rule: RuleWithOperations, request: AdmissionRequest): boolean {
  if (!has(rule.operations, request.operation)) return false;
  if (!has(rule.apiGroups, request.resource.group)) return false;
  if (!has(rule.apiVersions, request.resource.version)) return false;
  if (!resourceMatches(rule.resources, request.resource.resource, request.subResource)) return false;
  const scope = rule.scope ?? '*';
  if (scope === 'Cluster' && request.namespace !== '') return false;
  if (scope === 'Namespaced' && request.namespace === '') return false;
  return true;
}

function selectorMatches(selector: LabelSelector | undefined, labels: Record<string, string> | undefined): boolean {
  if (!selector) return true;
  return labelSelectorMatches(selector, labels ?? {});
}

export function webhookMatches(
  hook: RegisteredWebhook,
  request: AdmissionRequest,
  namespaceOf: (name: string) => KubeObject | undefined,
): boolean {
  if (!(hook.rules ?? []).some((rule) => ruleMatches(rule, request))) return false;
  if (request.resource.group === '' && request.resource.resource === 'namespaces') {
    const ns = request.object ?? request.oldObject;
    if (!selectorMatches(hook.namespaceSelector, ns?.metadata?.labels)) return false;
  } else if (request.namespace !== '') {
    const ns = namespaceOf(request.namespace);
    if (!selectorMatches(hook.namespaceSelector, ns?.metadata?.labels)) return false;
  }
  if (hook.objectSelector && (hook.objectSelector.matchLabels || hook.objectSelector.matchExpressions)) {
    const candidates = [request.object, request.oldObject].filter((o): o is KubeObject => !!o);
    if (!candidates.some((o) => selectorMatches(hook.objectSelector, o.metadata?.labels))) return false;
  }
  return true;
}
