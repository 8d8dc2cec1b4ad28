#!/usr/bin/env bash
# Builds the real cluster's Go components from the Go module proxy into a cache outside the repository, keyed by
# version: $KD_CACHE/bin/<component>-<version>/<binary>. A component whose binary is already there is skipped, so a
# warm run builds nothing. Progress goes to the terminal (stderr); each build's full log is kept in $KD_CACHE/logs.
#
# usage: build.sh [component...]   components: kubernetes etcd crictl holder containerd runc cni-plugins crio helm
#        helm4 openkruise kwok (default: the cluster's four; the runtime's, helm and helm4 (the chart's tests),
#        openkruise and kwok (the side-by-side benches) only when named)
# env:   KD_CACHE (default ${XDG_CACHE_HOME:-$HOME/.cache}/kruise-daemon); KUBERNETES_VERSION, CONTAINERD_VERSION,
#        CRIO_VERSION: the stack's (test/cluster/stack.ts passes them; default: versions.env's default cell)
#
# Only helper modules (a go.mod with versions and replace lines, written here) and this script are ours; no upstream
# source is kept in the repository.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=versions.env
. "$here/versions.env"
default_minor_key=KUBERNETES_${DEFAULT_KUBERNETES/./_}
KUBERNETES_VERSION=${KUBERNETES_VERSION:-${!default_minor_key}}
CONTAINERD_VERSION=${CONTAINERD_VERSION:-$CONTAINERD_2_4}
CRIO_VERSION=${CRIO_VERSION:-$CRIO_1_36}
KD_CACHE=${KD_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kruise-daemon}
export GOMODCACHE=$KD_CACHE/go/mod GOCACHE=$KD_CACHE/go/build GOTOOLCHAIN=local GOFLAGS=-mod=mod
export PATH=/usr/local/go/bin:$PATH
mkdir -p "$KD_CACHE/logs" "$KD_CACHE/bin" "$KD_CACHE/mod"

say() { printf '[build %s] %s\n' "$(date +%T)" "$*" >&2; }
need_go() {
  command -v go >/dev/null || { say "go is not installed: the real cluster is built from Go modules (Go >= 1.24 needed)"; exit 2; }
}
# run LOG CMD...: runs CMD with output to LOG; on failure prints the command and the log's last lines, exit 1
run() {
  local log=$1; shift
  if ! nice -n 10 "$@" >>"$log" 2>&1; then
    say "FAILED: $*"; say "last lines of $log:"; tail -n 25 "$log" >&2; exit 1
  fi
}

KUBE_BINS=(kube-apiserver kube-controller-manager kube-scheduler kube-proxy kubelet kubectl)

build_kubernetes() {
  local v=$KUBERNETES_VERSION out=$KD_CACHE/bin/kubernetes-$KUBERNETES_VERSION missing=()
  for b in "${KUBE_BINS[@]}"; do [ -x "$out/$b" ] || missing+=("$b"); done
  [ ${#missing[@]} -eq 0 ] && { say "kubernetes $v: cached in $out"; return; }
  need_go
  local mod=$KD_CACHE/mod/kubernetes-$v log=$KD_CACHE/logs/kubernetes-$v.log
  mkdir -p "$mod" "$out.tmp"; : >"$log"
  say "kubernetes $v: first build of ${missing[*]} (5 to 10 minutes on 2 cores; log: $log)"
  if [ ! -f "$mod/go.mod" ]; then
    say "kubernetes $v: downloading k8s.io/kubernetes' go.mod"
    local upstream
    upstream=$(cd "$mod" && go mod download -json "k8s.io/kubernetes@$v" 2>>"$log" | sed -n 's/.*"GoMod": "\(.*\)".*/\1/p')
    [ -f "$upstream" ] || { say "FAILED: go mod download k8s.io/kubernetes@$v"; tail -n 25 "$log" >&2; exit 1; }
    # The helper module: the minor's own go/godebug lines, k8s.io/kubernetes at v, and every staging module (which
    # k8s.io/kubernetes requires at v0.0.0 and replaces with ./staging/...) replaced with its tag v0.<minor>.<patch>.
    {
      echo "module kruisedaemon.test/k8sbuild"; echo
      grep -E '^go ' "$upstream"; grep -E '^godebug ' "$upstream" || true; echo
      echo "require k8s.io/kubernetes $v"; echo
      echo "replace ("
      grep -E '^\s*k8s.io/[^ ]+ => \./staging/' "$upstream" | awk -v sv="v0.${v#v1.}" '{print "\t" $1 " => " $1 " " sv}'
      echo ")"
    } >"$mod/go.mod.tmp"
    mv "$mod/go.mod.tmp" "$mod/go.mod"
  fi
  local minor; minor=$(echo "$v" | cut -d. -f2)
  local ld="-s -w"
  for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    ld="$ld -X $p.gitVersion=$v -X $p.gitMajor=1 -X $p.gitMinor=$minor -X $p.gitTreeState=clean"
    ld="$ld -X $p.gitCommit=0000000000000000000000000000000000000000 -X $p.buildDate=1970-01-01T00:00:00Z"
  done
  local i=0
  for b in "${missing[@]}"; do
    i=$((i + 1)); local t0=$SECONDS
    say "kubernetes $v: [$i/${#missing[@]}] go build k8s.io/kubernetes/cmd/$b"
    # CGO_ENABLED=0 for every binary (a static kubelet works and saves a second compile of the shared code).
    (cd "$mod" && CGO_ENABLED=0 run "$log" go build -trimpath -tags selinux,notest -ldflags "$ld" -o "$out.tmp/$b" "k8s.io/kubernetes/cmd/$b")
    say "kubernetes $v: [$i/${#missing[@]}] $b built in $((SECONDS - t0)) s"
  done
  mkdir -p "$out"; mv "$out.tmp"/* "$out/"; rmdir "$out.tmp"
}

build_etcd() {
  local v=$ETCD_VERSION out=$KD_CACHE/bin/etcd-$ETCD_VERSION
  [ -x "$out/etcd" ] && { say "etcd $v: cached in $out"; return; }
  need_go
  local mod=$KD_CACHE/mod/etcd-$v log=$KD_CACHE/logs/etcd-$v.log t0=$SECONDS
  mkdir -p "$mod" "$out.tmp"; : >"$log"
  say "etcd $v: first build (about 1 minute; log: $log)"
  printf 'module kruisedaemon.test/etcdbuild\n\ngo 1.24.0\n\nrequire go.etcd.io/etcd/server/v3 %s\n' "$v" >"$mod/go.mod"
  (cd "$mod" && CGO_ENABLED=0 run "$log" go build -trimpath -ldflags "-s -w" -o "$out.tmp/etcd" go.etcd.io/etcd/server/v3)
  mkdir -p "$out"; mv "$out.tmp"/* "$out/"; rmdir "$out.tmp"
  say "etcd $v: built in $((SECONDS - t0)) s"
}

# go_install NAME VERSION PACKAGE HOW-LONG: a tool whose module has no replace lines, by `go install PACKAGE@VERSION`
# into $KD_CACHE/bin/NAME-VERSION/.
go_install() {
  local name=$1 v=$2 pkg=$3 how_long=$4 out=$KD_CACHE/bin/$1-$2
  [ -x "$out/$name" ] && { say "$name $v: cached in $out"; return; }
  need_go
  local log=$KD_CACHE/logs/$name-$v.log t0=$SECONDS
  mkdir -p "$out.tmp"; : >"$log"
  say "$name $v: first build ($how_long; log: $log)"
  GOBIN=$out.tmp CGO_ENABLED=0 run "$log" go install -trimpath -ldflags "-s -w" "$pkg@$v"
  mkdir -p "$out"; mv "$out.tmp"/* "$out/"; rmdir "$out.tmp"
  say "$name $v: built in $((SECONDS - t0)) s"
}

build_crictl() { go_install crictl "$CRICTL_VERSION" sigs.k8s.io/cri-tools/cmd/crictl "about 30 s"; }

# containerd 2.x: the daemon, its runc shim and ctr, from a helper module requiring containerd/v2 (static: CGO_ENABLED=0
# drops only the btrfs snapshotter, which needs cgo). Version ldflags as its Makefile sets them.
CONTAINERD_BINS=(containerd containerd-shim-runc-v2 ctr)
build_containerd() {
  local v=$CONTAINERD_VERSION out=$KD_CACHE/bin/containerd-$CONTAINERD_VERSION missing=() m=github.com/containerd/containerd/v2
  for b in "${CONTAINERD_BINS[@]}"; do [ -x "$out/$b" ] || missing+=("$b"); done
  [ ${#missing[@]} -eq 0 ] && { say "containerd $v: cached in $out"; return; }
  need_go
  local mod=$KD_CACHE/mod/containerd-$v log=$KD_CACHE/logs/containerd-$v.log
  mkdir -p "$mod" "$out.tmp"; : >"$log"
  say "containerd $v: first build of ${missing[*]} (2 to 4 minutes on 2 cores; log: $log)"
  printf 'module kruisedaemon.test/containerdbuild\n\ngo 1.24.0\n\nrequire %s %s\n' "$m" "$v" >"$mod/go.mod"
  local ld="-s -w -X $m/version.Version=$v -X $m/version.Revision=0000000000000000000000000000000000000000"
  ld="$ld -X $m/version.Package=github.com/containerd/containerd/v2"
  local i=0
  for b in "${missing[@]}"; do
    i=$((i + 1)); local t0=$SECONDS
    say "containerd $v: [$i/${#missing[@]}] go build $m/cmd/$b"
    (cd "$mod" && CGO_ENABLED=0 run "$log" go build -trimpath -tags no_btrfs -ldflags "$ld" -o "$out.tmp/$b" "$m/cmd/$b")
    say "containerd $v: [$i/${#missing[@]}] $b built in $((SECONDS - t0)) s"
  done
  mkdir -p "$out"; mv "$out.tmp"/* "$out/"; rmdir "$out.tmp"
}

# runc: cgo (libcontainer/nsenter is C) with seccomp (Debian's libseccomp-dev; the host-packages component installs
# it), as runc's Makefile builds it by default.
build_runc() {
  local v=$RUNC_VERSION out=$KD_CACHE/bin/runc-$RUNC_VERSION m=github.com/opencontainers/runc
  [ -x "$out/runc" ] && { say "runc $v: cached in $out"; return; }
  need_go
  command -v gcc >/dev/null && [ -f /usr/include/seccomp.h ] || { say "runc needs gcc and libseccomp-dev (apt-get install gcc libseccomp-dev)"; exit 2; }
  local mod=$KD_CACHE/mod/runc-$v log=$KD_CACHE/logs/runc-$v.log t0=$SECONDS
  mkdir -p "$mod" "$out.tmp"; : >"$log"
  say "runc $v: first build (about 1 minute; log: $log)"
  printf 'module kruisedaemon.test/runcbuild\n\ngo 1.24.0\n\nrequire %s %s\n' "$m" "$v" >"$mod/go.mod"
  (cd "$mod" && CGO_ENABLED=1 run "$log" go build -trimpath -buildmode=pie -tags seccomp,urfave_cli_no_docs \
    -ldflags "-s -w -X main.version=${v#v} -X main.gitCommit=0000000" -o "$out.tmp/runc" "$m")
  mkdir -p "$out"; mv "$out.tmp"/* "$out/"; rmdir "$out.tmp"
  say "runc $v: built in $((SECONDS - t0)) s"
}

# The CNI plugins the nodes' pod network and the runtime cluster use (static, as the plugins' own build does).
CNI_PLUGINS=(bridge host-local loopback portmap)
build_cni_plugins() {
  local v=$CNI_PLUGINS_VERSION out=$KD_CACHE/bin/cni-plugins-$CNI_PLUGINS_VERSION missing=() m=github.com/containernetworking/plugins
  for b in "${CNI_PLUGINS[@]}"; do [ -x "$out/$b" ] || missing+=("$b"); done
  [ ${#missing[@]} -eq 0 ] && { say "cni-plugins $v: cached in $out"; return; }
  need_go
  local mod=$KD_CACHE/mod/cni-plugins-$v log=$KD_CACHE/logs/cni-plugins-$v.log t0=$SECONDS
  mkdir -p "$mod" "$out.tmp"; : >"$log"
  say "cni-plugins $v: first build of ${missing[*]} (about 1 minute; log: $log)"
  printf 'module kruisedaemon.test/cnibuild\n\ngo 1.24.0\n\nrequire %s %s\n' "$m" "$v" >"$mod/go.mod"
  local ld="-s -w -X github.com/containernetworking/plugins/pkg/utils/buildversion.BuildVersion=$v"
  for b in "${missing[@]}"; do
    local dir=main; [ "$b" = host-local ] && dir=ipam; [ "$b" = portmap ] && dir=meta
    (cd "$mod" && CGO_ENABLED=0 run "$log" go build -trimpath -ldflags "$ld" -o "$out.tmp/$b" "$m/plugins/$dir/$b")
  done
  mkdir -p "$out"; mv "$out.tmp"/* "$out/"; rmdir "$out.tmp"
  say "cni-plugins $v: built in $((SECONDS - t0)) s"
}

# CRI-O: crio from a helper module requiring github.com/cri-o/cri-o (cgo for seccomp through Debian's libseccomp-dev),
# with the build tags its Makefile picks on a machine without gpgme, btrfs, apparmor, selinux or libsubid headers:
# containers_image_openpgp (signatures checked in Go, no gpgme), exclude_graphdriver_btrfs and btrfs_noversion, seccomp.
# pinns (CRI-O's helper that pins namespaces; C in its module) is compiled with gcc as pinns/Makefile does (static).
# conmon is Debian's package (host-packages installs it for this cell).
CRIO_BINS=(crio pinns)
build_crio() {
  local v=$CRIO_VERSION out=$KD_CACHE/bin/crio-$CRIO_VERSION missing=() m=github.com/cri-o/cri-o
  for b in "${CRIO_BINS[@]}"; do [ -x "$out/$b" ] || missing+=("$b"); done
  [ ${#missing[@]} -eq 0 ] && { say "cri-o $v: cached in $out"; return; }
  need_go
  command -v gcc >/dev/null && [ -f /usr/include/seccomp.h ] || { say "cri-o needs gcc and libseccomp-dev (apt-get install gcc libseccomp-dev)"; exit 2; }
  local mod=$KD_CACHE/mod/crio-$v log=$KD_CACHE/logs/crio-$v.log
  mkdir -p "$mod" "$out.tmp"; : >"$log"
  say "cri-o $v: first build of ${missing[*]} (3 to 6 minutes on 2 cores; log: $log)"
  if [ ! -f "$mod/go.mod" ]; then
    local upstream
    upstream=$(cd "$mod" && go mod download -json "$m@$v" 2>>"$log" | sed -n 's/.*"GoMod": "\(.*\)".*/\1/p')
    [ -f "$upstream" ] || { say "FAILED: go mod download $m@$v"; tail -n 25 "$log" >&2; exit 1; }
    # CRI-O v1.36.1 requires the Kubernetes staging modules at v0.36.0-rc.0, which the proxy does not serve: each is
    # replaced with the minor's first release, v0.36.0. Not the newest patch: k8s.io/cri-api v0.36.3 changed
    # KeyValue.Value from string to []byte, which CRI-O v1.36.1's server does not compile against.
    local sv="v0.$(echo "$v" | cut -d. -f2).0"
    {
      echo "module kruisedaemon.test/criobuild"; echo; grep -E '^go ' "$upstream"; echo; echo "require $m $v"; echo
      echo "replace ("
      grep -E '^\s*k8s.io/[^ ]+ v0\.[0-9]+\.[0-9]+-(rc|alpha|beta)\.[0-9]+' "$upstream" | awk -v sv="$sv" '{print "\t" $1 " => " $1 " " sv}'
      echo ")"
    } >"$mod/go.mod.tmp"
    mv "$mod/go.mod.tmp" "$mod/go.mod"
  fi
  local i=0
  for b in "${missing[@]}"; do
    i=$((i + 1)); local t0=$SECONDS
    case $b in
      crio) say "cri-o $v: [$i/${#missing[@]}] go build $m/cmd/crio"
        (cd "$mod" && CGO_ENABLED=1 run "$log" go build -trimpath \
          -tags "containers_image_ostree_stub containers_image_openpgp exclude_graphdriver_btrfs btrfs_noversion seccomp" \
          -ldflags "-s -w -X $m/internal/version.buildDate=1970-01-01T00:00:00Z -X $m/internal/version.buildCommit=0000000" \
          -o "$out.tmp/crio" "$m/cmd/crio") ;;
      pinns) say "cri-o $v: [$i/${#missing[@]}] gcc pinns (C in $m/pinns)"
        local src; src=$(cd "$mod" && go list -m -f '{{.Dir}}' "$m" 2>>"$log")
        [ -d "$src/pinns/src" ] || { say "FAILED: no pinns sources in $m@$v ($src)"; exit 1; }
        rm -rf "$mod/pinns"; cp -r "$src/pinns/src" "$mod/pinns"; chmod -R u+w "$mod/pinns"
        run "$log" gcc -std=c99 -Os -O3 -Wall -Werror -Wextra -static -o "$out.tmp/pinns" "$mod"/pinns/*.c
        run "$log" strip -s "$out.tmp/pinns" ;;
    esac
    say "cri-o $v: [$i/${#missing[@]}] $b built in $((SECONDS - t0)) s"
  done
  mkdir -p "$out"; mv "$out.tmp"/* "$out/"; rmdir "$out.tmp"
}

# The node holder: our own few lines of Go, PID of a node's mount namespace (exits on TERM, reaps orphans).
build_holder() {
  local src=$here/holder/main.go sum out
  sum=$(sha256sum "$src" | cut -c1-12); out=$KD_CACHE/bin/holder-$sum
  [ -x "$out/holder" ] && { say "holder $sum: cached in $out"; return; }
  need_go
  local mod=$KD_CACHE/mod/holder-$sum log=$KD_CACHE/logs/holder-$sum.log
  mkdir -p "$mod" "$out.tmp"; : >"$log"
  cp "$src" "$mod/main.go"; printf 'module kruisedaemon.test/holder\n\ngo 1.24.0\n' >"$mod/go.mod"
  (cd "$mod" && CGO_ENABLED=0 run "$log" go build -trimpath -ldflags "-s -w" -o "$out.tmp/holder" .)
  mkdir -p "$out"; mv "$out.tmp"/* "$out/"; rmdir "$out.tmp"
  say "holder $sum: built"
}

# helm: the chart's tests (deploy/chart) run `helm lint`, `helm template`, `helm install --dry-run=server` and
# `helm install` with both helm 3 (HELM_VERSION, helm.sh/helm/v3) and helm 4 (HELM4_VERSION, helm.sh/helm/v4).
# build_helm MAJOR VERSION. The version ldflags are the ones helm's Makefile sets (so `helm version` says the
# version). The Kubernetes version helm's lint and template assume: helm 3's Makefile sets it by ldflags
# (pkg/lint/rules and pkg/chartutil k8sVersionMajor/Minor: the minor of the client-go it is built with); helm 4 has no
# such variables and reads its client-go module version from the binary's build info at run time
# (internal/version.K8sIOClientGoModVersion, pkg/chart/common makeDefaultCapabilities), which `go install
# module@version` records, so nothing is set for it.
build_helm() {
  local major=$1 v=$2 out=$KD_CACHE/bin/helm-$2 m=helm.sh/helm/v$1
  [ -x "$out/helm" ] && { say "helm $v: cached in $out"; return; }
  need_go
  local log=$KD_CACHE/logs/helm-$v.log t0=$SECONDS
  mkdir -p "$out.tmp"; : >"$log"
  say "helm $v: first build (about 2 minutes; log: $log)"
  local gomod
  gomod=$(cd "$KD_CACHE/mod" && go mod download -json "$m@$v" 2>>"$log" | sed -n 's/.*"GoMod": "\(.*\)".*/\1/p')
  [ -f "$gomod" ] || { say "FAILED: go mod download $m@$v"; tail -n 25 "$log" >&2; exit 1; }
  local kminor
  kminor=$(sed -n 's/^\s*k8s.io\/client-go v0\.\([0-9]*\)\..*/\1/p' "$gomod")
  [ -n "$kminor" ] || { say "FAILED: no k8s.io/client-go in helm $v's go.mod"; exit 1; }
  local ld="-s -w -X $m/internal/version.version=$v -X $m/internal/version.metadata="
  ld="$ld -X $m/internal/version.gitTreeState=clean"
  if [ "$major" = 3 ]; then
    for p in $m/pkg/lint/rules $m/pkg/chartutil; do
      ld="$ld -X $p.k8sVersionMajor=1 -X $p.k8sVersionMinor=$kminor"
    done
  fi
  GOBIN=$out.tmp CGO_ENABLED=0 run "$log" go install -trimpath -ldflags "$ld" "$m/cmd/helm@$v"
  mkdir -p "$out"; mv "$out.tmp"/* "$out/"; rmdir "$out.tmp"
  say "helm $v: built in $((SECONDS - t0)) s (Kubernetes 1.$kminor assumed by lint and template)"
}

# kwok: KWOK's kwok binary (fake Nodes kept Ready by node leases) for `npm run bench -- openkruise-scale`; its Stage
# files are read from the module cache.
build_kwok() { go_install kwok "$KWOK_VERSION" sigs.k8s.io/kwok/cmd/kwok "1 to 3 minutes"; }

# openkruise: OpenKruise's own kruise-manager, kruise-daemon and e2e test binary, the peers the side-by-side bench
# measures us against (never part of `npm test`). Built as its Dockerfile does (CGO_ENABLED=0, no ldflags; -trimpath
# only drops build paths), from a helper module whose go.mod copies github.com/openkruise/kruise's own go line,
# requirements and replace block (replace lines of a dependency are ignored, and k8s.io/kubernetes v1.32.10 requires
# its staging modules at v0.0.0), and requires the module itself. Its manifests (config/crd/bases, config/rbac, ...)
# stay in the module cache: $GOMODCACHE/github.com/openkruise/kruise@<version>/config.
OPENKRUISE_BINS=(kruise-manager kruise-daemon kruise-e2e.test)
build_openkruise() {
  local v=$OPENKRUISE_VERSION out=$KD_CACHE/bin/openkruise-$OPENKRUISE_VERSION missing=()
  local mod=$KD_CACHE/mod/openkruise-$v log=$KD_CACHE/logs/openkruise-$v.log m=github.com/openkruise/kruise
  for b in "${OPENKRUISE_BINS[@]}"; do [ -x "$out/$b" ] || missing+=("$b"); done
  if [ ${#missing[@]} -eq 0 ]; then
    # the manifests are read from the module's files: fetch them again if the module cache was cleaned
    if [ ! -d "$GOMODCACHE/$m@$v/config" ]; then
      need_go; say "openkruise $v: downloading $m@$v (its manifests)"
      (cd "$KD_CACHE/mod" && run "$log" go mod download "$m@$v")
    fi
    say "openkruise $v: cached in $out"; return
  fi
  need_go
  mkdir -p "$mod" "$out.tmp"; : >"$log"
  say "openkruise $v: first build of ${missing[*]} (6 to 10 minutes on 2 cores; log: $log)"
  if [ ! -f "$mod/go.mod" ]; then
    say "openkruise $v: downloading $m's go.mod"
    local upstream
    upstream=$(cd "$mod" && go mod download -json "$m@$v" 2>>"$log" | sed -n 's/.*"GoMod": "\(.*\)".*/\1/p')
    [ -f "$upstream" ] || { say "FAILED: go mod download $m@$v"; tail -n 25 "$log" >&2; exit 1; }
    { echo "module kruisedaemon.test/openkruisebuild"; echo; echo "require $m $v"; grep -v '^module ' "$upstream"; } >"$mod/go.mod.tmp"
    mv "$mod/go.mod.tmp" "$mod/go.mod"
  fi
  local i=0
  for b in "${missing[@]}"; do
    i=$((i + 1)); local t0=$SECONDS
    case $b in
      kruise-manager) say "openkruise $v: [$i/${#missing[@]}] go build $m (the manager)"
        (cd "$mod" && CGO_ENABLED=0 run "$log" go build -trimpath -o "$out.tmp/$b" "$m") ;;
      kruise-daemon) say "openkruise $v: [$i/${#missing[@]}] go build $m/cmd/daemon"
        (cd "$mod" && CGO_ENABLED=0 run "$log" go build -trimpath -o "$out.tmp/$b" "$m/cmd/daemon") ;;
      kruise-e2e.test) say "openkruise $v: [$i/${#missing[@]}] go test -c $m/test/e2e"
        (cd "$mod" && CGO_ENABLED=0 run "$log" go test -c -trimpath -o "$out.tmp/$b" "$m/test/e2e") ;;
    esac
    say "openkruise $v: [$i/${#missing[@]}] $b built in $((SECONDS - t0)) s"
  done
  mkdir -p "$out"; mv "$out.tmp"/* "$out/"; rmdir "$out.tmp"
}

want=("$@"); [ ${#want[@]} -eq 0 ] && want=(holder crictl etcd kubernetes)
known="kubernetes etcd crictl holder containerd runc cni-plugins crio helm helm4 openkruise kwok"
for c in "${want[@]}"; do
  case $c in
    kubernetes) build_kubernetes ;; etcd) build_etcd ;; crictl) build_crictl ;; holder) build_holder ;; helm) build_helm 3 "$HELM_VERSION" ;; helm4) build_helm 4 "$HELM4_VERSION" ;; openkruise) build_openkruise ;; kwok) build_kwok ;;
    containerd) build_containerd ;; runc) build_runc ;; cni-plugins) build_cni_plugins ;; crio) build_crio ;;
    *) say "unknown component '$c' ($known)"; exit 2 ;;
  esac
done
