#!/usr/bin/env bash
# `npm run test:all`: every check CI runs (package.json runs scripts/bootstrap.mjs first: the Debian packages of
# .ci/apt-packages.txt and `npm ci` when needed; the realinfra phase builds the Go binaries). The phases and their
# commands are listed once, in .ci/phases; .ci/run installs (apt, npm ci) and then runs this script, so
# the two cannot differ. Prints each phase's time, stops at the first failing phase, and ends with one
# line summing jest's "Tests:" lines of all phases.
#   npm run test:all                  # every phase
#   npm run test:all -- lint unit     # only the named phases, in the list's order
set -euo pipefail # pipefail: a failing phase fails through tee
cd "$(dirname "$0")/.."
T0=${KLUTCH_KIT_T0:-$(date +%s)}
LOG=$(mktemp -d)/tests.log
BG=$(dirname "$LOG")
BG_NAMES=()
# A failing phase ends the run: background phases still running are stopped with it.
trap 'for n in "${BG_NAMES[@]}"; do [ -f "$BG/$n.done" ] || kill -- "-$(cat "$BG/$n.pid")" 2>/dev/null || true; done; rm -rf "$BG"' EXIT

mapfile -t LINES < <(grep -vE '^\s*(#|$)' .ci/phases)
NAMES=()
# A name ending in "&" is a background phase: it starts niced and the next phases run meanwhile
# (the Go builds only some suites need; they wait for its build lock). The run waits for it at the end.
for l in "${LINES[@]}"; do n="${l%% *}"; NAMES+=("${n%&}"); done
for want in "$@"; do
  found=""
  for n in "${NAMES[@]}"; do [ "$n" = "$want" ] && found=1; done
  if [ -z "$found" ]; then
    echo "test:all: unknown phase \"$want\"; the phases (.ci/phases) are: ${NAMES[*]}" >&2
    exit 2
  fi
done

for l in "${LINES[@]}"; do
  name=${l%% *}
  cmd=$(echo "${l#"$name"}" | sed -E 's/^\s+//')
  background=""
  if [ "${name%&}" != "$name" ]; then background=1; name=${name%&}; fi
  if [ $# -gt 0 ]; then
    selected=""
    for want in "$@"; do [ "$want" = "$name" ] && selected=1; done
    [ -z "$selected" ] && continue
  fi
  s=$(date +%s)
  if [ -n "$background" ]; then
    echo "::: phase $name started in the background, niced ($cmd)"
    # Its own session, so that stopping it (trap above) stops every process it started. Where the kernel groups
    # sessions into scheduler autogroups (sched_autogroup_enabled), a new session is also a new autogroup, which gets
    # an equal share of the CPU beside the foreground's: the nice value counts only inside an autogroup. That share is
    # what the background builds need: they are the long pole of a brand-new machine (measured 2026-11-27: with the
    # autogroup niced as well, they got so little CPU beside the tests that both lanes waited for them).
    setsid bash -c 'nice -n 10 bash -c "$1" >"$2.log" 2>&1; echo "$? $(($(date +%s) - $3))" >"$2.done"' _ "$cmd" "$BG/$name" "$s" &
    echo $! >"$BG/$name.pid"
    BG_NAMES+=("$name")
    continue
  fi
  echo "::: phase $name ($cmd)"
  if ! bash -c "$cmd" 2>&1 | tee -a "$LOG"; then
    echo "::: phase $name FAILED after $(($(date +%s) - s))s (total $(($(date +%s) - T0))s)"
    exit 1
  fi
  echo "::: phase $name took $(($(date +%s) - s))s (total $(($(date +%s) - T0))s)"
done
for name in "${BG_NAMES[@]}"; do
  wait "$(cat "$BG/$name.pid")" || true
  read -r rc secs <"$BG/$name.done" || { rc=1; secs='?'; }
  # what each build took (the figures of a brand-new machine), then the end of its output
  grep -E 'built in|FAILED' "$BG/$name.log" | sed "s/^/  [$name] /" || true
  tail -n 3 "$BG/$name.log" | sed "s/^/  [$name] /"
  if [ "$rc" != 0 ]; then
    echo "::: phase $name (background) FAILED after ${secs}s; its output:"
    cat "$BG/$name.log"
    exit 1
  fi
  echo "::: phase $name (background) took ${secs}s"
done
echo "::: all phases passed in $(($(date +%s) - T0))s"
# One plain closing line for both jest projects: "Tests: N passed, N total" lines summed.
count() { awk -v w="$1" '/^Tests: /{for(i=2;i<=NF;i++) if($i==w"," || $i==w) s+=$(i-1)} END{print s+0}' "$LOG"; }
echo "tests: $(count passed) passed, $(count failed) failed"
