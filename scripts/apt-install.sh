#!/usr/bin/env bash
# Installs Debian packages (the missing ones of .ci/apt-packages.txt; .ci/run and `npm run setup` call it as root)
# without starting any system service they bring: rabbitmq-server and prometheus would otherwise start system-wide
# servers listening on every interface, and the sandbox runs its own on loopback. A policy-rc.d that denies every
# start is in place for the install, unless the machine has its own; it is removed afterwards.
#   bash scripts/apt-install.sh <package>…
set -euo pipefail
[ "$#" -gt 0 ] || { echo "apt-install: name the packages to install" >&2; exit 2; }
policy=/usr/sbin/policy-rc.d
added=""
if [ ! -e "$policy" ]; then
  printf '#!/bin/sh\n# klutch-kit scripts/apt-install.sh: no service starts during this install\nexit 101\n' > "$policy"
  chmod 755 "$policy"
  added=1
fi
cleanup() { if [ -n "$added" ]; then rm -f "$policy"; fi; }
trap cleanup EXIT
apt-get update -qq
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" >/dev/null
