#!/usr/bin/env bash
# Random access against streaming on storage that charges for every request, as a NAS or
# a disk does: the data lies on an ext4 file system on a loop device whose reads the
# kernel throttles (cgroup v1 blkio, or v2 io.max) to IOPS requests and BPS bytes a second.
# Each run starts with a cold page cache (--drop-cache) and prints samples/s, the read()
# calls it made, and the requests the device served (from the cgroup's counters).
#
#   benchmarks/stream_vs_random.sh DATA [IOPS] [BPS]     (root; DATA from make_data.py and
#                                                         make_shards.py: DATA/images, DATA/shards)
# Env: STOKER (the binary, default build/runtime/stoker), WORKERS, EPOCHS (default 1).
set -euo pipefail

data=${1:?usage: stream_vs_random.sh DATA [IOPS] [BPS]}
iops=${2:-150}
bps=${3:-104857600}
stoker=${STOKER:-$(pwd)/build/runtime/stoker}
workers=${WORKERS:-2}
epochs=${EPOCHS:-1}
[ "$(id -u)" = 0 ] || { echo "stream_vs_random: run as root (loop device, cgroup)" >&2; exit 1; }

work=$(mktemp -d /tmp/stoker-throttle-XXXXXX)
mnt=$work/mnt
cg=""
dev=""
cleanup() {
  mountpoint -q "$mnt" && umount "$mnt"
  [ -n "$dev" ] && losetup -d "$dev"
  [ -n "$cg" ] && rmdir "$cg" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT

size_mb=$(( $(du -sm "$data/images" "$data/shards" | awk '{s += $1} END {print s}') * 13 / 10 + 64 ))
truncate -s "${size_mb}M" "$work/fs.img"
mkfs.ext4 -q -F "$work/fs.img"
dev=$(losetup -f --show "$work/fs.img")
mkdir -p "$mnt"
mount "$dev" "$mnt"
cp -r "$data/images" "$data/shards" "$mnt/"
sync
majmin=$(lsblk -no MAJ:MIN "$dev" | tr -d ' ')

if [ -d /sys/fs/cgroup/blkio ]; then
  cg=/sys/fs/cgroup/blkio/stoker-throttle-$$
  mkdir "$cg"
  echo "$majmin $iops" > "$cg/blkio.throttle.read_iops_device"
  echo "$majmin $bps" > "$cg/blkio.throttle.read_bps_device"
  requests() { awk -v d="$majmin" '$1 == d && $2 == "Read" {print $3}' "$cg/blkio.throttle.io_serviced"; }
elif [ -f /sys/fs/cgroup/cgroup.controllers ]; then
  cg=/sys/fs/cgroup/stoker-throttle-$$
  mkdir "$cg"
  echo "+io" > /sys/fs/cgroup/cgroup.subtree_control 2>/dev/null || true
  echo "$majmin riops=$iops rbps=$bps" > "$cg/io.max"
  requests() { awk -v d="$majmin" '$1 == d {for (i = 2; i <= NF; i++) if ($i ~ /^rios=/) print substr($i, 6)}' "$cg/io.stat"; }
else
  echo "stream_vs_random: no blkio or io controller to throttle with" >&2
  exit 1
fi

echo "storage: ext4 on $dev, reads throttled to $iops requests/s and $((bps >> 20)) MiB/s"
printf "%-34s %10s %12s %12s %14s %14s\n" mode samples/s "read()/s" "requests/s" "bytes/request" "bytes/read()"
run() {  # NAME ARGS...
  local name=$1
  shift
  local before after json
  before=$(requests); before=${before:-0}
  json=$(sh -c 'echo $$ > "$0/cgroup.procs"; exec "$@"' "$cg" \
           "$stoker" bench images "$@" --epochs "$epochs" --workers "$workers" --drop-cache --json)
  after=$(requests); after=${after:-0}
  /usr/bin/python3 - "$name" "$json" "$before" "$after" <<'EOF'
import json, sys
name, j, before, after = sys.argv[1], json.loads(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
io, wall = j["io"], j["wall_s"]
reqs = after - before
storage = io["storage_read_bytes"]
print(f"{name:<34} {j['samples_per_s']:10.0f} {io['read_calls_per_s']:12.0f} {reqs / wall:12.0f} "
      f"{(storage / reqs if reqs else 0) / 1024:11.0f} KiB {io['read_call_bytes'] / max(io['read_calls'], 1) / 1024:11.0f} KiB")
EOF
}
export STOKER_CACHE_DIR=$work/cache  # the streaming index: counted once (below), then cached
"$stoker" bench images "$mnt/shards" --stream --batches 1 --epochs 1 --json >/dev/null
run "image folder, random access" "$mnt/images"
run "tar shards, random access" "$mnt/shards"
run "tar shards, streamed" "$mnt/shards" --stream
