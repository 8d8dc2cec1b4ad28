// The IP-reservation metrics: addresses held and reserved per network (gauges), and counters of what happened
// to reservations (reused, expired, superseded), of malformed durations and of addresses released by the GC.
import { Counter, Gauge, type Registry } from 'prom-client';

export interface IpamMetrics {
  allocated: Gauge<'network'>;
  reserved: Gauge<'network'>;
  reused: Counter<'network'>;
  expired: Counter<'network'>;
  superseded: Counter<'network'>;
  invalidDurations: Counter<'network'>;
  gcReleased: Counter<'network'>;
}

const perRegistry = new WeakMap<Registry, IpamMetrics>();

export function ipamMetrics(registry: Registry): IpamMetrics {
  const known = perRegistry.get(registry);
  if (known) return known;
  const registers = [registry];
  const labelNames = ['network'] as const;
  const m: IpamMetrics = {
    allocated: new Gauge({
      name: 'kruise_daemon_ipam_allocated_ips',
      help: 'Addresses held by live sandboxes, per CNI network',
      labelNames,
      registers,
    }),
    reserved: new Gauge({
      name: 'kruise_daemon_ipam_reserved_ips',
      help: 'Addresses reserved for a pod name (reserved-ip-duration), per CNI network',
      labelNames,
      registers,
    }),
    reused: new Counter({
      name: 'kruise_daemon_ipam_reservations_reused_total',
      help: 'Reserved addresses handed back to a pod with the same namespace/name',
      labelNames,
      registers,
    }),
    expired: new Counter({
      name: 'kruise_daemon_ipam_reservations_expired_total',
      help: 'Reservations freed because their duration ended',
      labelNames,
      registers,
    }),
    superseded: new Counter({
      name: 'kruise_daemon_ipam_reservations_superseded_total',
      help: 'Reservations freed early (a newer one for the same pod name, or outside the configured ranges)',
      labelNames,
      registers,
    }),
    invalidDurations: new Counter({
      name: 'kruise_daemon_ipam_invalid_durations_total',
      help: 'Pods whose io.kubernetes.cri/reserved-ip-duration was malformed (treated as none)',
      labelNames,
      registers,
    }),
    gcReleased: new Counter({
      name: 'kruise_daemon_ipam_gc_released_total',
      help: 'Addresses released because the runtime no longer has their sandbox',
      labelNames,
      registers,
    }),
  };
  perRegistry.set(registry, m);
  return m;
}
