// What the kruise-daemon image is, in one place: the Dockerfile (the recipe for a Docker engine) and build.ts (the same
// image assembled here with umoci, no engine) both follow it; test/unit/operate/dockerfile.test.ts keeps them in step.

/** Where the package lives in the image (the Dockerfile's WORKDIR). */
export const APP_DIR = '/opt/kruise-daemon';

/** The commands on PATH: name -> compiled entry, relative to APP_DIR (as package.json "bin"). */
export const IMAGE_COMMANDS: Readonly<Record<string, string>> = {
  'kruise-daemon': 'dist/src/cli/kruise-daemon.js',
  'kruise-controller': 'dist/src/cli/kruise-controller.js',
  'kubectl-kruise-node': 'dist/src/cli/kubectl-kruise-node.js',
  'kubectl-kruise_node': 'dist/src/cli/kubectl-kruise-node.js',
};

/** The image's configuration (the Dockerfile's final ENV, WORKDIR, USER, EXPOSE and ENTRYPOINT). */
export const IMAGE_CONFIG = {
  entrypoint: ['kruise-daemon'],
  user: '65532:65532',
  env: {
    PATH: '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin',
    NODE_ENV: 'production',
  },
  workingDir: APP_DIR,
  /** /healthz and /metrics of the agent (10221), the controller's metrics (8000) and webhooks (9876). */
  exposedPorts: ['10221/tcp', '8000/tcp', '9876/tcp'],
} as const;

/** The repository name the cluster script pushes the image under (`$REGISTRY/<name>:<tag>`), as deploy/ names it. */
export const IMAGE_NAME = 'kruise-daemon';
