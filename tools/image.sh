#!/usr/bin/env bash
# tools/image.sh OUT.tar [BINARY] [REFERENCE]
#
# Builds rekon's container image without a container daemon, with umoci and
# skopeo (Debian packages `umoci` and `skopeo`; no registry, no base image
# pulled), and writes it as a docker-archive that `docker load`,
# `ctr images import` and `skopeo copy` take. The image holds exactly what
# the binary needs and nothing else, like distroless/cc:
#   /usr/local/bin/rekon         BINARY (default: target/release/rekon)
#   the shared libraries `ldd BINARY` lists, at the paths it lists
#   /etc/ssl/certs/ca-certificates.crt   (for --webhook-url clients, in-cluster TLS uses the mounted CA)
#   /etc/passwd, /etc/group      root, nobody, nonroot (65532)
#   /tmp (1777), /home/nonroot (65532)
# It runs as 65532:65532 with ENTRYPOINT /usr/local/bin/rekon and the CMD of
# the Dockerfile. REFERENCE defaults to ghcr.io/rekon-dev/rekon:<version>,
# the image deploy/deployment.yaml names.
set -euo pipefail
[[ $# -ge 1 ]] || { echo "usage: $0 OUT.tar [BINARY] [REFERENCE]" >&2; exit 2; }
root=$(cd "$(dirname "$0")/.." && pwd)
out=$1
binary=${2:-$root/target/release/rekon}
version=$(sed -n 's/^version = "\(.*\)"/\1/p' "$root/Cargo.toml" | head -1)
reference=${3:-ghcr.io/rekon-dev/rekon:$version}
for tool in umoci skopeo ldd; do
  command -v "$tool" >/dev/null || { echo "$0: $tool is missing (apt-get install umoci skopeo)" >&2; exit 1; }
done
[[ -x $binary ]] || { echo "$0: no binary at $binary (cargo build --release -p rekon --bin rekon)" >&2; exit 1; }

work=$(mktemp -d "${TMPDIR:-/tmp}/rekon-image.XXXXXX")
trap 'rm -rf "$work"' EXIT
layout=$work/oci
tag=$version
umoci init --layout "$layout"
umoci new --image "$layout:$tag"
# As root, files keep their owners; otherwise umoci records them as root's.
rootless=()
[[ $(id -u) == 0 ]] || rootless=(--rootless)
umoci unpack "${rootless[@]}" --image "$layout:$tag" "$work/bundle" >/dev/null
rootfs=$work/bundle/rootfs

install -D -m 0755 "$binary" "$rootfs/usr/local/bin/rekon"
# Without symbols and debug info: a smaller image, and nothing at run time needs them.
command -v strip >/dev/null && strip "$rootfs/usr/local/bin/rekon"
# Every library the binary loads, at the path the loader looks for it (the
# loader itself at its PT_INTERP path).
ldd "$binary" | awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\// { print $1 }' |
  while read -r library; do
    install -D -m 0755 "$(readlink -f "$library")" "$rootfs$library"
  done
if [[ -f /etc/ssl/certs/ca-certificates.crt ]]; then
  install -D -m 0644 /etc/ssl/certs/ca-certificates.crt "$rootfs/etc/ssl/certs/ca-certificates.crt"
fi
mkdir -p "$rootfs/etc" "$rootfs/tmp" "$rootfs/home/nonroot"
chmod 1777 "$rootfs/tmp"
[[ $(id -u) == 0 ]] && chown 65532:65532 "$rootfs/home/nonroot"
printf '%s\n' 'root:x:0:0:root:/root:/sbin/nologin' \
  'nobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin' \
  'nonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin' > "$rootfs/etc/passwd"
printf '%s\n' 'root:x:0:' 'nobody:x:65534:' 'nonroot:x:65532:' > "$rootfs/etc/group"
umoci repack "${rootless[@]}" --image "$layout:$tag" "$work/bundle" >/dev/null
umoci config --image "$layout:$tag" \
  --os linux --architecture amd64 \
  --config.user 65532:65532 \
  --config.workingdir / \
  --config.entrypoint /usr/local/bin/rekon \
  --config.cmd run --config.cmd --watch-configmaps --config.cmd --leader-elect \
  --config.cmd --metrics-addr=0.0.0.0:8080 --config.cmd --cache-dir=/cache \
  --config.env PATH=/usr/local/bin:/usr/bin:/bin \
  --config.env SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt \
  --config.label org.opencontainers.image.title=rekon \
  --config.label "org.opencontainers.image.version=$version" \
  --config.label org.opencontainers.image.source=https://github.com/rekon-dev/rekon \
  --config.label org.opencontainers.image.licenses=Apache-2.0
umoci gc --layout "$layout"
mkdir -p "$(dirname "$out")"
rm -f "$out"
skopeo copy --quiet "oci:$layout:$tag" "docker-archive:$out:$reference"
echo "$out: $reference ($(du -h "$out" | cut -f1))"
