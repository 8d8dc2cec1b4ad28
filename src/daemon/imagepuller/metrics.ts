// The image puller's metrics: pulls by result, pull duration, tags by phase, pins, images gone, the image filesystem.
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import type { ImagePullPhase } from '../../api/nodeimage.js';
import type { PinCounts } from './image-pins.js';

export const IMAGE_PULLS_TOTAL = 'kruise_daemon_image_pulls_total';
export const IMAGE_PULL_DURATION = 'kruise_daemon_image_pull_duration_seconds';
export const IMAGE_TAGS = 'kruise_daemon_image_tags';

/** How a tag's pull ended (counted once per (tag, version)); `present` = IfNotPresent found it on the node. */
export type PullResult = 'succeeded' | 'failed' | 'present';

export interface ImagePullMetrics {
  pullFinished(result: PullResult, seconds: number): void;
  /** One CRI PullImage attempt (a tag may make several); `paused`: cancelled for kubelet's pull, resumed later. */
  attempt(outcome: 'ok' | 'error' | 'paused'): void;
  setTagsByPhase(counts: Readonly<Record<ImagePullPhase, number>>): void;
  /** The Succeeded tags' references by pin state. */
  setPins(counts: Readonly<PinCounts>): void;
  /** The image of a Succeeded tag left the node. */
  imageGone(): void;
  /** The image filesystem's use as the disk check last read it (percent), or undefined while the check is off. */
  setImageFsPercent(percent: number | undefined): void;
}

export const IMAGE_PINS = 'kruise_daemon_image_pins';
export const IMAGES_REMOVED_TOTAL = 'kruise_daemon_image_removed_total';
export const IMAGE_FS_USED_PERCENT = 'kruise_daemon_image_fs_used_percent';
const PIN_STATES: readonly (keyof PinCounts)[] = ['pinned', 'pinned-by-others', 'missing', 'failed', 'unsupported'];

const PHASES: readonly ImagePullPhase[] = ['Waiting', 'Pulling', 'Succeeded', 'Failed'];
const perRegistry = new WeakMap<Registry, ImagePullMetrics>();

export function imagePullMetrics(registry: Registry): ImagePullMetrics {
  const known = perRegistry.get(registry);
  if (known) return known;
  const registers = [registry];
  const pulls = new Counter({
    name: IMAGE_PULLS_TOTAL,
    help: 'Image tags whose pull ended, by result (succeeded, failed, present: IfNotPresent found it)',
    labelNames: ['result'],
    registers,
  });
  const attempts = new Counter({
    name: 'kruise_daemon_image_pull_attempts_total',
    help: 'CRI PullImage attempts made by the image puller, by outcome (paused: cancelled for kubelet, resumed later)',
    labelNames: ['outcome'],
    registers,
  });
  const duration = new Histogram({
    name: IMAGE_PULL_DURATION,
    help: 'From the start of a tag pull (Pulling) to its end, all attempts included, seconds',
    labelNames: ['result'],
    buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800],
    registers,
  });
  const tags = new Gauge({
    name: IMAGE_TAGS,
    help: "Tags of this node's NodeImage by phase",
    labelNames: ['phase'],
    registers,
  });
  const pins = new Gauge({
    name: IMAGE_PINS,
    help: 'Images of Succeeded tags by pin state (pinned by us, pinned-by-others, missing, failed, unsupported)',
    labelNames: ['state'],
    registers,
  });
  const removed = new Counter({
    name: IMAGES_REMOVED_TOTAL,
    help: 'Images of Succeeded tags found gone from the node (and pulled again)',
    registers,
  });
  const imageFs = new Gauge({
    name: IMAGE_FS_USED_PERCENT,
    help: "The runtime's image filesystem in use, percent, as the disk check last read it (absent while it is off)",
    registers,
  });
  for (const state of PIN_STATES) pins.set({ state }, 0);
  for (const phase of PHASES) tags.set({ phase }, 0);
  for (const outcome of ['ok', 'error', 'paused']) attempts.inc({ outcome }, 0);
  for (const result of ['succeeded', 'failed', 'present']) pulls.inc({ result }, 0);
  const metrics: ImagePullMetrics = {
    pullFinished(result, seconds) {
      pulls.inc({ result });
      duration.observe({ result }, seconds);
    },
    attempt(outcome) {
      attempts.inc({ outcome });
    },
    setTagsByPhase(counts) {
      for (const phase of PHASES) tags.set({ phase }, counts[phase]);
    },
    setPins(counts) {
      for (const state of PIN_STATES) pins.set({ state }, counts[state]);
    },
    imageGone() {
      removed.inc();
    },
    setImageFsPercent(percent) {
      if (percent === undefined) imageFs.reset();
      else imageFs.set(percent);
    },
  };
  perRegistry.set(registry, metrics);
  return metrics;
}
