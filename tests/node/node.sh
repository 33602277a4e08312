#!/usr/bin/env bash
# tests/node/node.sh up DIR [IMAGE.tar]... | down DIR
#
# A real one-node Kubernetes cluster for rekon's end-to-end test
# (host/tests/node.rs), inside network namespaces of its own, from the
# binaries in $KUBEBUILDER_ASSETS (etcd, kube-apiserver,
# kube-controller-manager, kube-scheduler, kubelet, kube-proxy, kubectl,
# pause) and Debian's containerd, runc, CNI plugins and umoci/skopeo.
#
#   netns rekon-e2e     the node: 10.77.0.1/24 on a veth whose other end sits,
#                       unaddressed, in netns rekon-e2e-bh (nothing leaves);
#                       every process below runs in it
#   control plane       etcd, kube-apiserver (:6443, Service CIDR 10.0.0.0/24),
#                       kube-controller-manager, kube-scheduler
#   containerd + runc   its own root, state and socket under DIR and /run/rekon-e2e
#   CNI                 bridge rekon-cni0, pods in 10.88.0.0/16
#   kubelet, kube-proxy node "rekon-e2e", iptables mode
#
# `up` imports the pause image (built here from $KUBEBUILDER_ASSETS/pause)
# and every IMAGE.tar given (docker-archives, tools/image.sh), and returns
# once the node is Ready. It writes DIR/kubectl (kubectl as admin, in the
# netns), DIR/ctr, DIR/admin.token and DIR/pki/ca.crt. `down` stops it all
# and removes what it made outside DIR. Needs root (network namespaces,
# mounts, cgroups); all traffic stays inside the namespaces it creates.
set -Eeuo pipefail
NS=rekon-e2e; BH=rekon-e2e-bh; RUN=/run/rekon-e2e
NODE_IP=10.77.0.1; NODE=rekon-e2e; PORT=6443
POD_CIDR=10.88.0.0/16; SVC_CIDR=10.0.0.0/24; SVC_API=10.0.0.1
BIN=${KUBEBUILDER_ASSETS:?KUBEBUILDER_ASSETS names the folder of the Kubernetes binaries}
SOCK=$RUN/containerd.sock
log() { echo "[node.sh $(date +%H:%M:%S)] $*" >&2; }
IN() { nsenter --net=/run/netns/$NS "$@"; }

start() { # DIR NAME CMD... : runs CMD in the netns, detached; records its pid
  local dir=$1 name=$2; shift 2
  setsid nsenter --net=/run/netns/$NS "$@" >> "$dir/$name.log" 2>&1 < /dev/null &
  echo $! > "$dir/$name.pid"
  echo "$name $!" >> "$dir/pids"
}

alive() { [[ -n ${1:-} ]] && kill -0 "$1" 2>/dev/null && [[ $(awk '{print $3}' "/proc/$1/stat" 2>/dev/null) != Z ]]; }

stop() { # PID : TERM, then KILL after 15 s
  local pid=$1
  alive "$pid" || return 0
  kill -TERM "$pid" 2>/dev/null || true
  for _ in $(seq 1 30); do alive "$pid" || return 0; sleep 0.5; done
  kill -KILL "$pid" 2>/dev/null || true
  sleep 0.5
}

wait_for() { # SECONDS WHAT CMD...
  local deadline=$((SECONDS + $1)) what=$2; shift 2
  until "$@" >/dev/null 2>&1; do
    (( SECONDS < deadline )) || { log "timed out waiting for $what"; return 1; }
    sleep 0.5
  done
}

kubeconfig() { # FILE USER TOKEN
  cat > "$1" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: e2e
  cluster: {server: "https://127.0.0.1:$PORT", certificate-authority: "$D/pki/ca.crt"}
users:
- name: $2
  user: {token: "$3"}
contexts:
- name: e2e
  context: {cluster: e2e, user: "$2"}
current-context: e2e
EOF
}

pki() {
  mkdir -p "$D/pki"; local P=$D/pki
  openssl req -x509 -newkey rsa:2048 -nodes -keyout "$P/ca.key" -out "$P/ca.crt" -days 30 -subj /CN=rekon-e2e-ca 2>/dev/null
  openssl req -newkey rsa:2048 -nodes -keyout "$P/apiserver.key" -out "$P/apiserver.csr" -subj /CN=kube-apiserver 2>/dev/null
  printf 'subjectAltName=IP:127.0.0.1,IP:%s,IP:%s,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local\nextendedKeyUsage=serverAuth\n' \
    "$NODE_IP" "$SVC_API" > "$P/apiserver.ext"
  openssl x509 -req -in "$P/apiserver.csr" -CA "$P/ca.crt" -CAkey "$P/ca.key" -CAcreateserial -days 30 \
    -extfile "$P/apiserver.ext" -out "$P/apiserver.crt" 2>/dev/null
  openssl genrsa -out "$P/sa.key" 2048 2>/dev/null
  openssl rsa -in "$P/sa.key" -pubout -out "$P/sa.pub" 2>/dev/null
}

pause_image() { # builds registry.k8s.io/pause:3.10.2 from $BIN/pause into DIR/pause.tar
  local work=$D/pause-image
  rm -rf "$work"; mkdir -p "$work"
  umoci init --layout "$work/oci" >/dev/null
  umoci new --image "$work/oci:3.10.2" >/dev/null
  umoci unpack --image "$work/oci:3.10.2" "$work/bundle" >/dev/null
  install -m 0755 "$BIN/pause" "$work/bundle/rootfs/pause"
  umoci repack --image "$work/oci:3.10.2" "$work/bundle" >/dev/null
  umoci config --image "$work/oci:3.10.2" --os linux --architecture amd64 \
    --config.entrypoint /pause --config.user 65535:65535 >/dev/null
  rm -f "$D/pause.tar"
  skopeo copy --quiet "oci:$work/oci:3.10.2" "docker-archive:$D/pause.tar:registry.k8s.io/pause:3.10.2"
  rm -rf "$work"
}

up() {
  mkdir -p "$D"; D=$(cd "$D" && pwd)
  : > "$D/pids"
  # ---- network: the node's namespace, and a black hole behind its only link
  ip netns add $NS; ip netns add $BH
  ip link add rke0 netns $NS type veth peer name rke0bh netns $BH
  ip -n $BH link set lo up; ip -n $BH link set rke0bh up
  ip -n $NS link set lo up
  ip -n $NS addr add $NODE_IP/24 dev rke0; ip -n $NS link set rke0 up
  ip -n $NS route add default via 10.77.0.254 dev rke0
  ip netns exec $NS sysctl -qw net.ipv4.ip_forward=1
  # ---- control plane
  pki
  local token; token=$(openssl rand -hex 24)
  {
    echo "$token,admin,admin,\"system:masters\""
    for user in system:kube-controller-manager system:kube-scheduler "system:node:$NODE" system:kube-proxy; do
      echo "$(openssl rand -hex 24),$user,$user,\"system:masters\""
    done
  } > "$D/tokens.csv"
  chmod 600 "$D/tokens.csv"
  echo "$token" > "$D/admin.token"
  for pair in admin=admin kube-controller-manager=system:kube-controller-manager \
      kube-scheduler=system:kube-scheduler node=system:node:$NODE kube-proxy=system:kube-proxy; do
    local user=${pair#*=}
    kubeconfig "$D/${pair%%=*}.kubeconfig" "$user" "$(awk -F, -v u="$user" '$2==u {print $1}' "$D/tokens.csv")"
  done
  printf '#!/bin/sh\nexec nsenter --net=/run/netns/%s %s/kubectl --kubeconfig %s/admin.kubeconfig "$@"\n' $NS "$BIN" "$D" > "$D/kubectl"
  printf '#!/bin/sh\nexec nsenter --net=/run/netns/%s /usr/bin/ctr --address %s -n k8s.io "$@"\n' $NS "$SOCK" > "$D/ctr"
  chmod +x "$D/kubectl" "$D/ctr"
  mkdir -p "$D/etcd"
  start "$D" etcd "$BIN/etcd" --data-dir="$D/etcd" --name=e2e \
    --listen-client-urls=http://127.0.0.1:2379 --advertise-client-urls=http://127.0.0.1:2379 \
    --listen-peer-urls=http://127.0.0.1:2380 --initial-advertise-peer-urls=http://127.0.0.1:2380 \
    --initial-cluster=e2e=http://127.0.0.1:2380 --log-level=warn
  start "$D" kube-apiserver "$BIN/kube-apiserver" --etcd-servers=http://127.0.0.1:2379 \
    --bind-address=0.0.0.0 --advertise-address=$NODE_IP --secure-port=$PORT \
    --tls-cert-file="$D/pki/apiserver.crt" --tls-private-key-file="$D/pki/apiserver.key" \
    --client-ca-file="$D/pki/ca.crt" --token-auth-file="$D/tokens.csv" --authorization-mode=Node,RBAC \
    --service-account-issuer=https://kubernetes.default.svc.cluster.local \
    --service-account-key-file="$D/pki/sa.pub" --service-account-signing-key-file="$D/pki/sa.key" \
    --service-cluster-ip-range=$SVC_CIDR --endpoint-reconciler-type=lease \
    --kubelet-preferred-address-types=InternalIP --allow-privileged=true --profiling=false --v=1
  wait_for 120 "kube-apiserver" sh -c "[ \"\$('$D/kubectl' get --raw /readyz 2>/dev/null)\" = ok ]"
  start "$D" kube-controller-manager "$BIN/kube-controller-manager" \
    --kubeconfig="$D/kube-controller-manager.kubeconfig" --authentication-kubeconfig="$D/kube-controller-manager.kubeconfig" \
    --authorization-kubeconfig="$D/kube-controller-manager.kubeconfig" --bind-address=127.0.0.1 --secure-port=10257 \
    --leader-elect=false --controllers='*' --root-ca-file="$D/pki/ca.crt" \
    --service-account-private-key-file="$D/pki/sa.key" \
    --cluster-signing-cert-file="$D/pki/ca.crt" --cluster-signing-key-file="$D/pki/ca.key" \
    --flex-volume-plugin-dir="$D/flexvolume" --profiling=false --v=1
  start "$D" kube-scheduler "$BIN/kube-scheduler" --kubeconfig="$D/kube-scheduler.kubeconfig" \
    --authentication-kubeconfig="$D/kube-scheduler.kubeconfig" --authorization-kubeconfig="$D/kube-scheduler.kubeconfig" \
    --bind-address=127.0.0.1 --secure-port=10259 --leader-elect=false --profiling=false --v=1
  log "control plane up"
  # ---- containerd and CNI
  mkdir -p "$D/cni/net.d" "$D/containerd" "$RUN"
  cat > "$D/cni/net.d/10-e2e.conflist" <<EOF
{"cniVersion": "0.4.0", "name": "rekon-e2e", "plugins": [
  {"type": "bridge", "bridge": "rekon-cni0", "isGateway": true, "ipMasq": false, "hairpinMode": true,
   "ipam": {"type": "host-local", "dataDir": "$D/cni/ipam", "ranges": [[{"subnet": "$POD_CIDR"}]],
            "routes": [{"dst": "0.0.0.0/0"}]}},
  {"type": "portmap", "capabilities": {"portMappings": true}}]}
EOF
  cat > "$D/containerd/config.toml" <<EOF
version = 2
root = "$D/containerd/root"
state = "$RUN/state"
[grpc]
  address = "$SOCK"
[plugins."io.containerd.internal.v1.opt"]
  path = "$D/containerd/opt"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "registry.k8s.io/pause:3.10.2"
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
  # Some machines' root lacks CAP_SYS_RESOURCE: runc could not set the
  # sandbox's oom_score_adj, and every pod would fail to start.
  restrict_oom_score_adj = true
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
        Root = "$RUN/runc"
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "$D/cni/net.d"
    max_conf_num = 1
EOF
  start "$D" containerd /usr/bin/containerd --config "$D/containerd/config.toml"
  wait_for 30 containerd "$D/ctr" version
  pause_image
  for image in "$D/pause.tar" "$@"; do "$D/ctr" images import "$image" >/dev/null; done
  log "containerd up, images imported"
  # ---- kubelet and kube-proxy
  mkdir -p "$D/kubelet"
  echo "nameserver 127.0.0.1" > "$D/kubelet/resolv.conf"
  cat > "$D/kubelet/config.yaml" <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
failCgroupV1: false
cgroupDriver: cgroupfs
containerRuntimeEndpoint: unix://$SOCK
address: $NODE_IP
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
authentication: {anonymous: {enabled: true}, webhook: {enabled: false}}
authorization: {mode: AlwaysAllow}
clusterDomain: cluster.local
resolvConf: $D/kubelet/resolv.conf
# a test node never evicts nor collects images: a busy or nearly full machine would
# otherwise fail the rekon pods (Error, then Pending on a pressure taint) mid-test
evictionHard: {memory.available: 0%, nodefs.available: 0%, nodefs.inodesFree: 0%, imagefs.available: 0%, imagefs.inodesFree: 0%}
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
syncFrequency: 10s
volumePluginDir: $D/kubelet/volume-plugins
podLogsDir: $D/kubelet/pod-logs
EOF
  start "$D" kubelet "$BIN/kubelet" --config="$D/kubelet/config.yaml" --kubeconfig="$D/node.kubeconfig" \
    --root-dir="$D/kubelet/root" --cert-dir="$D/kubelet/pki" --hostname-override=$NODE --node-ip=$NODE_IP --v=1
  cat > "$D/kube-proxy.yaml" <<EOF
apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
clientConnection: {kubeconfig: $D/kube-proxy.kubeconfig}
mode: iptables
hostnameOverride: $NODE
bindAddress: $NODE_IP
clusterCIDR: $POD_CIDR
healthzBindAddress: 127.0.0.1:10256
metricsBindAddress: 127.0.0.1:10249
conntrack: {maxPerCore: 0, min: 0, tcpEstablishedTimeout: 0s, tcpCloseWaitTimeout: 0s}
EOF
  start "$D" kube-proxy "$BIN/kube-proxy" --config="$D/kube-proxy.yaml" --v=1
  wait_for 120 "the node to be Ready" sh -c \
    "[ \"\$('$D/kubectl' get node $NODE -o jsonpath='{.status.conditions[?(@.type==\"Ready\")].status}')\" = True ]"
  wait_for 60 "the default ServiceAccount" "$D/kubectl" get serviceaccount default -n default
  log "node $NODE Ready"
}

down() {
  D=$(cd "$D" 2>/dev/null && pwd) || return 0
  pid() { awk -v n="$1" '$1==n {print $2}' "$D/pids" 2>/dev/null; }
  stop "$(pid kube-controller-manager)"
  # The pods go the normal way while the kubelet still runs.
  if alive "$(pid kubelet)" && alive "$(pid kube-apiserver)"; then
    "$D/kubectl" delete pods --all -A --grace-period=1 --wait=false --request-timeout=5s >/dev/null 2>&1 || true
    for _ in $(seq 1 40); do
      [[ -z $("$D/ctr" tasks ls -q 2>/dev/null) ]] && break
      sleep 0.5
    done
  fi
  for name in kube-scheduler kube-proxy kubelet; do stop "$(pid $name)"; done
  if alive "$(pid containerd)"; then
    for id in $("$D/ctr" tasks ls -q 2>/dev/null); do "$D/ctr" tasks kill -s SIGKILL "$id" >/dev/null 2>&1 || true; done
    sleep 1
    for id in $("$D/ctr" containers ls -q 2>/dev/null); do
      "$D/ctr" tasks rm -f "$id" >/dev/null 2>&1 || true
      "$D/ctr" containers rm "$id" >/dev/null 2>&1 || true
    done
  fi
  for name in containerd kube-apiserver etcd; do stop "$(pid $name)"; done
  # Whatever is left, in the order it was started, backwards.
  tac "$D/pids" 2>/dev/null | while read -r _ p; do stop "$p"; done
  : > "$D/pids"
  # Pod network namespaces, mounts under DIR and the run folder.
  for m in $(awk -v a="$D/" -v b="$RUN/" 'index($2,a)==1 || index($2,b)==1 || $2 ~ "^/run/netns/cni-" {print $2}' /proc/self/mounts | sort -r); do
    umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || true
  done
  rm -f /run/netns/cni-* 2>/dev/null || true
  for c in /sys/fs/cgroup/*/kubepods /sys/fs/cgroup/unified/kubepods /sys/fs/cgroup/kubepods; do
    [[ -d $c ]] && find "$c" -depth -type d -exec rmdir {} \; 2>/dev/null
  done
  for l in /var/log/containers/*.log; do
    [[ -L $l && $(readlink "$l") == "$D/"* ]] && rm -f "$l"
  done
  rmdir /var/log/containers /var/log/pods 2>/dev/null || true
  rm -rf "$RUN"
  ip netns del $NS 2>/dev/null || true
  ip netns del $BH 2>/dev/null || true
  log "node down"
}

case ${1:-} in
  up) [[ $# -ge 2 ]] || { echo "usage: $0 up DIR [IMAGE.tar]..." >&2; exit 2; }
      D=$2; shift 2
      trap 'log "up failed"; down' ERR
      up "$@" ;;
  down) [[ $# -eq 2 ]] || { echo "usage: $0 down DIR" >&2; exit 2; }
        D=$2; down ;;
  *) echo "usage: $0 up DIR [IMAGE.tar]... | down DIR" >&2; exit 2 ;;
esac
