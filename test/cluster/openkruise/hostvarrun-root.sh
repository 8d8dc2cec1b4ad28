#!/bin/sh
# Runs a command as OpenKruise's kruise-daemon expects to run: with the node's /run at /hostvarrun (its DaemonSet
# mounts the host's /var/run there, and it looks for the CRI socket only under that path). Started inside a node
# (nsenter -t <holder> --mount --net) and in a private mount namespace of its own (unshare --mount), so nothing of
# this is seen by the node or the host, and nothing is created on the host's own paths: ROOT (an existing, empty
# directory of the cluster's) gets a tmpfs holding the node's top-level entries (each directory bound recursively,
# each symlink copied) plus hostvarrun, and the command is chrooted into it. The last step is exec, so the command
# keeps this process's PID (its RSS is read from /proc/PID/status).
#
# usage: unshare --mount -- sh hostvarrun-root.sh ROOT COMMAND [ARG...]
set -eu
root=$1
shift
[ -d "$root" ] || { echo "hostvarrun-root: $root is not a directory" >&2; exit 2; }
mount -t tmpfs -o mode=0755,size=1m openkruise-root "$root"
# binding a directory that holds ROOT must not copy ROOT's own mounts into it again
mount --make-unbindable "$root"
for entry in /*; do
  name=${entry#/}
  if [ -L "$entry" ]; then
    ln -s "$(readlink "$entry")" "$root/$name"
  elif [ -d "$entry" ]; then
    mkdir "$root/$name"
    mount --rbind "$entry" "$root/$name"
  fi
done
mkdir "$root/hostvarrun"
mount --rbind /run "$root/hostvarrun"
exec chroot "$root" "$@"
