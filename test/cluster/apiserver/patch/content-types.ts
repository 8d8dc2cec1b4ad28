// The PATCH content types kube-apiserver accepts, and which of them a resource takes.
import { supportsStrategicMerge, type GroupVersionKind } from './strategic-schema.js';

export const JSON_PATCH = 'application/json-patch+json';
export const MERGE_PATCH = 'application/merge-patch+json';
export const STRATEGIC_MERGE_PATCH = 'application/strategic-merge-patch+json';
export const APPLY_PATCH = 'application/apply-patch+yaml';

export type PatchContentType =
  typeof JSON_PATCH | typeof MERGE_PATCH | typeof STRATEGIC_MERGE_PATCH | typeof APPLY_PATCH;

export interface PatchTarget {
  /** True for objects of a CustomResourceDefinition: no strategic merge patch. Default: decided by the group. */
  readonly isCustomResource?: boolean;
}

/** The media type of a Content-Type header value: parameters (`; charset=utf-8`) dropped, lower case. */
export function mediaTypeOf(contentType: string): string {
  const semicolon = contentType.indexOf(';');
  return (semicolon < 0 ? contentType : contentType.slice(0, semicolon)).trim().toLowerCase();
}

/** Whether strategic merge patch applies: built-in kinds yes, custom resources no. */
export function acceptsStrategicMerge(gvk: GroupVersionKind, target: PatchTarget = {}): boolean {
  return target.isCustomResource === undefined ? supportsStrategicMerge(gvk) : !target.isCustomResource;
}

/** The patch types a resource accepts, in the order kube-apiserver lists them in its 415 message. */
export function acceptedPatchTypes(gvk: GroupVersionKind, target: PatchTarget = {}): PatchContentType[] {
  return acceptsStrategicMerge(gvk, target)
    ? [JSON_PATCH, MERGE_PATCH, STRATEGIC_MERGE_PATCH, APPLY_PATCH]
    : [JSON_PATCH, MERGE_PATCH, APPLY_PATCH];
}

/** kube-apiserver's 415 message for a PATCH whose content type the resource does not accept. */
export function unsupportedPatchTypeMessage(accepted: readonly string[]): string {
  return `the body of the request was in an unknown format - accepted media types include: ${accepted.join(', ')}`;
}
