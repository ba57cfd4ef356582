#!/usr/bin/env bash
# `npm run setup`: everything this repository needs, in one command, on a fresh clone:
#   1. the Debian packages of .ci/apt-packages.txt (the ones CI installs): installed when this user may
#      (root, or sudo without a password prompt), else the exact apt-get line is printed and set-up goes on;
#   2. `npm ci` (the exact versions of package-lock.json);
#   3. scripts/setup.ts: checks Go, then builds (or finds in ~/.cache/klutch-kit) every Go-built binary
#      — the clusters, kubectl, the real node, Crossplane, the Pulumi toolchain — with progress and an
#      estimate of the time left. Options: --no-apt, --no-builds.
# Plain bash on purpose: it runs before `npm ci`, when tsx is not installed yet.
set -euo pipefail
cd "$(dirname "$0")/.."
T0=$(date +%s)
APT=1
BUILDS=1
for a in "$@"; do
  case "$a" in
    --no-apt) APT=0 ;;
    --no-builds) BUILDS=0 ;;
    *)
      echo "setup: unknown option \"$a\"; expected --no-apt or --no-builds" >&2
      exit 2
      ;;
  esac
done
step() { echo "::: setup: $1 ($(($(date +%s) - T0)) s)"; }
APT_MISSING=""

if [ "$APT" = 1 ]; then
  step "Debian packages (.ci/apt-packages.txt)"
  pkgs=$(grep -vE '^\s*(#|$)' .ci/apt-packages.txt || true)
  if ! command -v dpkg >/dev/null 2>&1; then
    echo "  not a Debian/Ubuntu system (no dpkg): install the equivalents of: $(echo $pkgs)"
    APT_MISSING=$(echo $pkgs)
  else
    missing=""
    for p in $pkgs; do dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"; done
    missing=${missing# }
    if [ -z "$missing" ]; then
      echo "  all installed: $(echo $pkgs)"
    else
      line="bash scripts/apt-install.sh $missing"
      if [ "$(id -u)" = 0 ]; then
        echo "  installing: $missing"
        bash scripts/apt-install.sh $missing  # starts no system service (rabbitmq-server, prometheus)
      elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
        echo "  installing with sudo: $missing"
        sudo bash scripts/apt-install.sh $missing
      else
        echo "  missing: $missing — this user may not install them (not root, no password-less sudo). Run as root:"
        echo "    sudo sh -c '$line'"
        APT_MISSING=$missing
      fi
    fi
  fi
fi

step "npm ci"
npm ci --no-audit --no-fund

# A failed build step (no Go, a failed build) does not hide the Debian packages' line: the end names both.
BUILDS_RC=0
if [ "$BUILDS" = 1 ]; then
  step "Go-built binaries (scripts/setup.ts)"
  npx tsx scripts/setup.ts || BUILDS_RC=$?
fi
if [ -n "$APT_MISSING" ]; then
  if [ "$BUILDS_RC" = 0 ]; then
    echo "::: setup: done in $(($(date +%s) - T0)) s, except the Debian packages: $APT_MISSING (command above)"
  else
    echo "::: setup: not done after $(($(date +%s) - T0)) s: the Go-built binaries (message above) and the Debian packages: $APT_MISSING (command above)"
  fi
  exit 1
fi
if [ "$BUILDS_RC" != 0 ]; then
  echo "::: setup: not done after $(($(date +%s) - T0)) s: the Go-built binaries (message above)"
  exit "$BUILDS_RC"
fi
echo "::: setup: done in $(($(date +%s) - T0)) s. Next: npm run sandbox (a whole Klutch here), npm run test:all (every check CI runs)"
