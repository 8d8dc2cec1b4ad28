# One image, both binaries: kruise-daemon (the node agent, DaemonSet) and kruise-controller (Deployment), plus the
# kruise-ipam CNI plugin the agent installs on its node and the kubectl-kruise-node plugin.
#   docker build -t kruise-daemon:dev .
# This is the recipe for a Docker engine (or buildah/kaniko). The local cluster builds the same image without one:
# test/cluster/image/build.ts assembles it with umoci from Debian's libraries, the Node 24 binary of the npm package
# `node` and `npm ci --omit=dev` (docs/adr/0005-image-without-an-engine.md). What both must agree on (commands,
# ENTRYPOINT, USER, ENV, WORKDIR, EXPOSE) is in test/cluster/image/spec.ts; test/unit/operate/dockerfile.test.ts
# keeps this file and that one in step: change both together.
# The DaemonSet runs the default entry point (kruise-daemon) as root, because the CRI socket is root-owned; the
# Deployment runs `kruise-controller` as the image's non-root user. See docs/install.md.

# --- build: the whole toolchain (devDependencies: TypeScript), compiled into dist/ --------------------------------
FROM node:24-bookworm-slim AS build
WORKDIR /build
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY . .
RUN npx tsc -p tsconfig.json

# --- runtime: production dependencies and the compiled src/ only ---------------------------------------------------
FROM node:24-bookworm-slim
ENV NODE_ENV=production
WORKDIR /opt/kruise-daemon
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force
# proto/ is read at run time (the CRI definitions); packageRoot() finds it beside package.json.
COPY proto ./proto
COPY --from=build /build/dist/src ./dist/src
# Command names as in package.json "bin" (and the Deployment's `command: [kruise-controller]`).
# kruise-ipam is not a command here: the agent installs it on the node behind a wrapper that names Node.
RUN chmod 0755 dist/src/cli/kruise-daemon.js dist/src/cli/kruise-controller.js dist/src/cli/kubectl-kruise-node.js \
 && ln -s /opt/kruise-daemon/dist/src/cli/kruise-daemon.js /usr/local/bin/kruise-daemon \
 && ln -s /opt/kruise-daemon/dist/src/cli/kruise-controller.js /usr/local/bin/kruise-controller \
 && ln -s /opt/kruise-daemon/dist/src/cli/kubectl-kruise-node.js /usr/local/bin/kubectl-kruise-node \
 && ln -s /opt/kruise-daemon/dist/src/cli/kubectl-kruise-node.js /usr/local/bin/kubectl-kruise_node
# 65532: the conventional "nonroot" user of distroless images; the controller runs as it. The agent's DaemonSet
# overrides it with runAsUser: 0 (and drops every capability), see deploy/base/daemon/daemonset.yaml.
USER 65532:65532
EXPOSE 10221 8000 9876
ENTRYPOINT ["kruise-daemon"]
