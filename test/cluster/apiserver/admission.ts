// The admission hook point of the write path. Mutating plugins run before validation and may change the object;
// validating plugins run after it and may only deny. Both see the object in the version the client used.
// A later issue plugs the Mutating/ValidatingWebhookConfiguration caller in here.
import { ApiError } from './errors.js';
import type { KubeObject } from './types.js';

export type AdmissionOperation = 'CREATE' | 'UPDATE' | 'DELETE';

export interface AdmissionRequest {
  operation: AdmissionOperation;
  kind: { group: string; version: string; kind: string };
  resource: { group: string; version: string; resource: string };
  subResource: string;
  namespace: string;
  name: string;
  /** The new object (CREATE, UPDATE). */
  object?: KubeObject | undefined;
  /** The current object (UPDATE, DELETE). */
  oldObject?: KubeObject | undefined;
  dryRun: boolean;
  userAgent: string;
}

export interface AdmissionPlugin {
  name: string;
  /** Return a replacement object, or undefined to keep it; throw (see admissionDenied) to deny. */
  mutate?(request: AdmissionRequest): Promise<KubeObject | undefined> | KubeObject | undefined;
  /** Throw to deny. */
  validate?(request: AdmissionRequest): Promise<void> | void;
}

/** The error a denying plugin throws: 403 Forbidden, as kube-apiserver reports a webhook denial. */
export function admissionDenied(request: AdmissionRequest, plugin: string, message: string, code = 403): ApiError {
  return new ApiError(
    code,
    code === 403 ? 'Forbidden' : 'BadRequest',
    `admission webhook "${plugin}" denied the request: ${message}`,
    { name: request.name, group: request.resource.group, kind: request.resource.resource },
  );
}

export class AdmissionChain {
  private readonly plugins: AdmissionPlugin[] = [];

  /** Add a plugin; returns a function that removes it. */
  add(plugin: AdmissionPlugin): () => void {
    this.plugins.push(plugin);
    return () => {
      const i = this.plugins.indexOf(plugin);
      if (i >= 0) this.plugins.splice(i, 1);
    };
  }

  get empty(): boolean {
    return this.plugins.length === 0;
  }

  async mutate(request: AdmissionRequest): Promise<KubeObject | undefined> {
    let object = request.object;
    for (const plugin of this.plugins) {
      if (!plugin.mutate) continue;
      const changed = await plugin.mutate({ ...request, object });
      if (changed) object = changed;
    }
    return object;
  }

  async validate(request: AdmissionRequest): Promise<void> {
    for (const plugin of this.plugins) if (plugin.validate) await plugin.validate(request);
  }
}
