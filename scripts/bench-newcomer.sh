#!/usr/bin/env bash
# npm run bench:newcomer [-- --user NAME] [-- --runs N]
#
# The newcomer's times, as README's first screen promises them: in a fresh clone of this checkout (HEAD, no
# node_modules, no folder of this machine's beside it) and an empty HOME (so empty npm, Go and klutch-kit caches), `npm run sandbox`,
# timed from the command to its psql line. Run 1 is the cold one (the bootstrap's `npm ci`, the Go builds, the
# sandbox); runs 2..N are warm (the same command again in the same clone, after `npm run sandbox -- --down`).
# As the calling user, or (run as root) with --user NAME as that ordinary user: made when missing and removed again.
# Prints each run's seconds to the psql line and the machine's load; the clone, HOME and caches are removed at the end.
# A cold run takes tens of minutes on 2 cores (the Go builds): run it on a machine with nothing else to do.
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
user="" runs=2
while [ $# -gt 0 ]; do
  case "$1" in
    --user) user="${2:?--user needs a name}"; shift 2 ;;
    --runs) runs="${2:?--runs needs a number}"; shift 2 ;;
    *) echo "bench:newcomer: unknown argument \"$1\" (usage: npm run bench:newcomer [-- --user NAME] [-- --runs N])" >&2; exit 2 ;;
  esac
done
case "$runs" in '' | *[!0-9]* | 0) echo "bench:newcomer: --runs must be a whole number ≥ 1, got \"$runs\"" >&2; exit 2 ;; esac
if [ -n "$user" ] && [ "$(id -u)" != 0 ]; then echo "bench:newcomer: --user needs root (it runs the commands with runuser)" >&2; exit 2; fi

base="$(mktemp -d /var/tmp/klutch-kit-newcomer-XXXXXX)"
chmod 755 "$base"
made_user=""
if [ -n "$user" ] && ! id -u "$user" >/dev/null 2>&1; then useradd --no-create-home --shell /bin/sh "$user"; made_user=1; fi
up_pid=""
cleanup() {
  if [ -n "$up_pid" ] && kill -0 "$up_pid" 2>/dev/null; then as_user npm run sandbox -- --down >/dev/null 2>&1 || kill -TERM -- "-$up_pid" 2>/dev/null || true; fi
  if [ -n "$user" ]; then
    pkill -KILL -u "$user" 2>/dev/null || true
    for _ in $(seq 1 40); do pgrep -u "$user" >/dev/null || break; sleep 0.25; done # gone before the user and its files
  fi
  [ -n "$made_user" ] && userdel "$user" 2>/dev/null || true
  chmod -R u+w "$base" 2>/dev/null || true # Go's module cache is read-only
  for _ in 1 2 3; do rm -rf "$base" 2>/dev/null && break; sleep 1; done
  [ ! -e "$base" ] || echo "bench:newcomer: could not remove $base entirely; remove it by hand" >&2
}
trap cleanup EXIT
trap 'exit 130' INT TERM

git clone --quiet --depth 1 "file://$repo" "$base/clone"
mkdir -p "$base/home" "$base/tmp"
[ -n "$user" ] && chown -R "$user:" "$base/clone" "$base/home" "$base/tmp"
# The host-wide loopback address reservations (sandbox/a8s-operator/loopback.ts), shared with other users' sandboxes.
loopback="${KLUTCH_KIT_LOOPBACK_DIR:-/tmp/klutch-kit-loopback}"
mkdir -p "$loopback" && { [ "$(id -u)" != 0 ] || chmod 1777 "$loopback"; }
# Exactly this environment: nothing from the caller's but PATH (and the npm registry and Go proxy settings a machine
# needs to reach its package registries).
envs=(HOME="$base/home" TMPDIR="$base/tmp" PATH="$PATH" KLUTCH_KIT_LOOPBACK_DIR="$loopback")
for v in npm_config_registry GOPROXY GONOSUMDB GOSUMDB GOFLAGS; do [ -n "${!v:-}" ] && envs+=("$v=${!v}"); done
as_user() {
  if [ -n "$user" ]; then (cd "$base/clone" && runuser -u "$user" -- env -i "${envs[@]}" "$@"); else (cd "$base/clone" && env -i "${envs[@]}" "$@"); fi
}

echo "bench:newcomer: $(git -C "$repo" rev-parse --short HEAD), as ${user:-$(id -un)} (uid $(id -u "${user:-$(id -un)}")), $(nproc) cores; clone and empty HOME in $base"
results=()
for i in $(seq 1 "$runs"); do
  kind=$([ "$i" = 1 ] && echo cold || echo warm)
  log="$base/run-$i.log"
  load0=$(cut -d' ' -f1 /proc/loadavg)
  t0=$(date +%s.%N)
  set -m
  as_user npm run sandbox >"$log" 2>&1 &
  up_pid=$!
  set +m
  while ! grep -q '^  psql ' "$log" 2>/dev/null; do
    if ! kill -0 "$up_pid" 2>/dev/null; then echo "bench:newcomer: run $i ($kind): npm run sandbox ended before its psql line; its output:" >&2; tail -40 "$log" >&2; exit 1; fi
    sleep 0.2
  done
  t=$(echo "$(date +%s.%N) - $t0" | bc)
  load1=$(cut -d' ' -f1 /proc/loadavg)
  printf 'bench:newcomer: run %d (%s): fresh clone → psql line in %.1f s (load average %s → %s)\n' "$i" "$kind" "$t" "$load0" "$load1"
  # what the run paid for: the bootstrap's npm ci and each Go build (wall and CPU)
  grep -E '^\[bootstrap\] npm ci took|: built in ' "$log" | sed -E 's/ → .*//; s/^\[build \+[0-9]+ s\] //; s/^/    /' || true
  results+=("$kind $(printf '%.1f' "$t")")
  as_user npm run sandbox -- --down >"$base/down-$i.log" 2>&1 || { echo "bench:newcomer: npm run sandbox -- --down failed:" >&2; cat "$base/down-$i.log" >&2; exit 1; }
  wait "$up_pid" || true
  up_pid=""
done
echo "bench:newcomer: $(date -u +%F), $(nproc) cores, as ${user:-$(id -un)}: ${results[*]} (seconds to the psql line)"
