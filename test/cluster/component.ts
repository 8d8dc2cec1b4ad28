// The local cluster (test infrastructure) is a list of components started in order by `npm run cluster -- up`
// and stopped in reverse order by `down`. Each component is idempotent: up() on a running component is a no-op.

export interface ClusterContext {
  /** Private directory of this cluster instance (CLUSTER_DIR, default <repo>/.cluster). */
  dir: string;
  /** Variables written so far to <dir>/env by the components started before this one. */
  env: Record<string, string>;
  /** Progress output for humans (stderr); a plain function, handed on to helpers as it is. */
  log: (message: string) => void;
}

export interface ClusterComponent {
  name: string;
  /** Start (or find running) and return the variables it adds to <dir>/env. */
  up(ctx: ClusterContext): Promise<Record<string, string>>;
  /** Stop what up() started (by PID) and clean up; must succeed when nothing runs. */
  down(ctx: ClusterContext): Promise<void>;
}
