// The small part of meta/v1 that apps.kruise.io objects embed, as it travels on the wire (JSON).
// Times are RFC 3339 strings, never Date objects. Core kinds (Pod, Node, ...) are in wire.ts.

/** RFC 3339 time as the API serializes metav1.Time, e.g. `2024-05-01T10:00:00Z`. */
export type Time = string;

// The object metadata shapes are the Kubernetes layer's (one definition for every object on the wire).
import type { ObjectMeta } from '../kube/object.js';
export type { ObjectMeta };

/** An integer or a string (`intstr.IntOrString`), e.g. a parallelism of `2` or `"2"`. */
export type IntOrString = number | string;

/** core/v1 ObjectReference (NodeImage tags point at the ImagePullJobs that want them with these). */
export interface ObjectReference {
  apiVersion?: string;
  kind?: string;
  namespace?: string | undefined;
  name?: string | undefined;
  uid?: string | undefined;
  resourceVersion?: string;
  fieldPath?: string;
}

export type LabelSelectorOperator = 'In' | 'NotIn' | 'Exists' | 'DoesNotExist';

export interface LabelSelectorRequirement {
  key: string;
  operator: LabelSelectorOperator;
  values?: string[];
}

export interface LabelSelector {
  matchLabels?: Record<string, string>;
  matchExpressions?: LabelSelectorRequirement[];
}
