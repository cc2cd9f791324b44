#!/usr/bin/env bash
# Local stand-ins for images a machine without Docker Hub cannot pull (this project's
# CI is such a machine): `python:3.11-slim` and verifiers' network helper
# `localhost/verifiers-network:1`. Both come from one Debian bookworm debootstrap
# (Python 3.11, pip, venv, iptables, iproute2) plus uv. The image trusts the host's CA
# bundle, so pip and uv work behind a TLS-intercepting proxy during setup.
# A normal machine skips this and lets Docker pull the real images.
#   bash scripts/build_standin_images.sh [TAG]     (default causal-gym/python-standin:3.11)
set -euo pipefail
tag=${1:-causal-gym/python-standin:3.11}
net_tag=localhost/verifiers-network:1
if docker image inspect "$tag" >/dev/null 2>&1 && docker image inspect "$net_tag" >/dev/null 2>&1; then
  echo "build_standin_images.sh: $tag and $net_tag already present"
  exit 0
fi
uv_bin=$(command -v uv || true)
[ -n "$uv_bin" ] || { echo "build_standin_images.sh: uv must be on PATH (pip install uv)" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
echo "build_standin_images.sh: debootstrap bookworm (about a minute)"
debootstrap --variant=minbase \
  --include=python3,python3-venv,python3-pip,ca-certificates,iptables,iproute2 \
  bookworm "$work/rootfs" http://deb.debian.org/debian >"$work/debootstrap.log" 2>&1 \
  || { tail -20 "$work/debootstrap.log" >&2; exit 1; }
cp /etc/ssl/certs/ca-certificates.crt "$work/rootfs/etc/ssl/certs/ca-certificates.crt"
cp "$uv_bin" "$work/rootfs/usr/local/bin/uv"
rm -rf "$work/rootfs/var/cache/apt/archives/"*.deb "$work/rootfs/var/lib/apt/lists/"*
tar -C "$work/rootfs" -c . | docker import \
  --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
  --change 'ENV SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt' \
  --change 'ENV UV_NATIVE_TLS=1' \
  --change 'ENV LANG=C.UTF-8' \
  --change 'CMD ["python3"]' - "$tag" >/dev/null
docker tag "$tag" "$net_tag"
echo "build_standin_images.sh: built $tag and tagged it $net_tag"
