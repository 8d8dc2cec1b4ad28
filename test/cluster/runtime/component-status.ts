// What `npm run cluster -- status` shows. A component may offer status() beside up()/down() (the ClusterComponent
// interface stays as it is; the CLI asks only components that have it).
import type { ClusterComponent, ClusterContext } from '../component.js';

export interface ComponentStatus {
  /** What is checked, e.g. "containerd" or "registry-auth". */
  name: string;
  healthy: boolean;
  /** PID, address, reason. */
  detail: string;
}

export interface ComponentWithStatus extends ClusterComponent {
  status(ctx: ClusterContext): Promise<ComponentStatus[]>;
}

export function hasStatus(component: ClusterComponent): component is ComponentWithStatus {
  return typeof (component as Partial<ComponentWithStatus>).status === 'function';
}
