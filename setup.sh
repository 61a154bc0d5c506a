#!/usr/bin/env bash
# Sets up Rackside in .venv beside this script. Safe to run again: it only installs what is missing.
#
#   ./setup.sh          runtime: the clock, the kiosk, the default lexicon (on a Pi, also the GPIO back-end)
#   ./setup.sh --dev    the same, plus what the tests and benchmarks need
#
# Needs only python3 (3.11 or newer) with its venv module; on a Raspberry Pi it also uses apt for the
# lgpio C library. Every failure says what went wrong and what to do.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$here"
venv="$here/.venv"
dev=0
for arg in "$@"; do
    case "$arg" in
        --dev) dev=1 ;;
        -h|--help) sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "setup.sh: unknown option '$arg' (allowed: --dev, --help)" >&2; exit 2 ;;
    esac
done

say() { printf 'setup.sh: %s\n' "$*"; }
die() { printf 'setup.sh: error: %s\n' "$*" >&2; exit 1; }

# --- Python ------------------------------------------------------------------------------------
python="${PYTHON:-python3}"
command -v "$python" >/dev/null 2>&1 || die "python3 not found. On Debian or Raspberry Pi OS: sudo apt install python3 python3-venv"
"$python" -c 'import sys; sys.exit(sys.version_info < (3, 11))' \
    || die "Rackside needs Python 3.11 or newer (it uses tomllib); found $("$python" -V 2>&1)"

sudo=""; [ "$(id -u)" = 0 ] || sudo="sudo"
apt_install() {  # apt_install PACKAGE...: Debian's packages, when apt is there and we may use it
    command -v apt-get >/dev/null 2>&1 || return 1
    say "installing $* with apt-get"
    $sudo apt-get install -y "$@" >/dev/null || { $sudo apt-get update -qq && $sudo apt-get install -y "$@" >/dev/null; }
}

make_venv() { "$python" -m venv "$venv" 2>"$venv.err"; }
if [ ! -x "$venv/bin/python" ]; then
    say "creating $venv"
    if ! make_venv; then
        # Debian and Raspberry Pi OS ship venv's pip bootstrap separately (python3-venv).
        rm -rf "$venv"
        if apt_install python3-venv && make_venv; then
            :
        else
            rm -rf "$venv"
            cat "$venv.err" >&2
            rm -f "$venv.err"
            die "could not create a virtual environment. On Debian or Raspberry Pi OS: sudo apt install python3-venv"
        fi
    fi
    rm -f "$venv.err"
fi
vpy="$venv/bin/python"
pip=("$vpy" -m pip --disable-pip-version-check --quiet)

# --- Is this a Raspberry Pi? ---------------------------------------------------------------------
pi_model=""
if [ -r /proc/device-tree/model ]; then
    pi_model="$(tr -d '\0' </proc/device-tree/model)"
fi
case "$pi_model" in Raspberry\ Pi*) on_pi=1 ;; *) on_pi=0 ;; esac

# --- Mosquitto for the hall; and what the tests start for real (--dev): Chromium, Xvfb, rclone ---
# Debian's packages, as python3-venv above: the hall tests run a real broker, the console's tests a
# real browser (Playwright drives /usr/bin/chromium; it never downloads a browser of its own).
# Off a Pi (a director's laptop), the plain install brings Mosquitto too, so `rackside hall demo`
# and `rackside hall broker` run from a fresh clone; a Pi gets it with the broker's service
# (deploy/install-pi.sh broker), since a table's clock only needs the client.
missing=()
if [ "$dev" = 1 ] || [ "$on_pi" = 0 ]; then
    [ -x /usr/sbin/mosquitto ] || command -v mosquitto >/dev/null 2>&1 || missing+=(mosquitto)
fi
if [ "$dev" = 1 ]; then
    [ -x /usr/bin/chromium ] || missing+=(chromium)
    command -v Xvfb >/dev/null 2>&1 || missing+=(xvfb)
    # `rackside hall publish` syncs the public view through rclone; its tests sync for real.
    command -v rclone >/dev/null 2>&1 || missing+=(rclone)
    # the director's machine's firewall (deploy/rackside-console.nft), loaded for real in
    # tests/test_console_firewall.py's network namespaces
    [ -x /usr/sbin/nft ] || command -v nft >/dev/null 2>&1 || missing+=(nftables)
fi
if [ "${#missing[@]}" -gt 0 ]; then
    apt_install "${missing[@]}" \
        || die "could not install ${missing[*]} with apt; install them (sudo apt install ${missing[*]}), then run ./setup.sh again"
fi

# --- Dependencies ------------------------------------------------------------------------------
reqs=(-r requirements.txt)
[ "$dev" = 1 ] && reqs=(-r requirements-dev.txt)
if [ "$on_pi" = 1 ]; then
    say "found a $pi_model: installing the lgpio GPIO back-end"
    # pip builds lgpio against the lg C library, which Raspberry Pi OS packages; where PyPI has no
    # wheel for this board (32-bit Pi OS, for one), marisa-trie is built with g++ too.
    pi_build_deps=(liblgpio-dev swig python3-dev g++)
    if ! dpkg -s "${pi_build_deps[@]}" >/dev/null 2>&1; then
        apt_install "${pi_build_deps[@]}" \
            || die "could not install ${pi_build_deps[*]} with apt; install them, then run ./setup.sh again"
    fi
    reqs+=(-r requirements-pi.txt)
fi
# compat mode: the editable install is one .pth line, not an import hook that every process of the
# venv would pay for at start-up. pip's line names this folder, which would make every top-level
# folder importable too (`game.clock` beside `rackside.game.clock`: two modules, two
# `Phase` classes; issue 16). So the line is pointed at $import_root, a folder in the venv holding
# only a `rackside` link to rackside/ (itself links to the subsystems): `rackside` is then the one
# importable name, as in the wheel (tests/test_packaging.py checks).
import_root="$venv/rackside-import"
editable_layout=2  # bump when the editable layout changes: the stamp then makes existing venvs re-install
# Skip pip when nothing it would install has changed since the last run (fast, and works offline).
stamp="$venv/.rackside-installed"
# bin/rackside too: pip installs a copy of it as the venv's `rackside`, which must not go stale.
hash="$({ cat pyproject.toml requirements*.txt bin/rackside; echo "editable layout $editable_layout"; } | sha256sum | cut -d' ' -f1)"
installed="$(cat "$stamp" 2>/dev/null || true)"
# A --dev install also satisfies a plain one.
if [ "$installed" = "$hash dev=$dev pi=$on_pi" ] || [ "$installed" = "$hash dev=1 pi=$on_pi" ]; then
    say "dependencies already installed"
else
    say "installing pinned dependencies"
    "${pip[@]}" install "${reqs[@]}" || die "pip could not install the dependencies (see above). Check the network, then run ./setup.sh again"
    "${pip[@]}" install --no-deps -e . --config-settings editable_mode=compat || die "pip could not install Rackside itself (see above)"
    pth=("$venv"/lib/python3*/site-packages/__editable__.rackside-*.pth)
    [ -f "${pth[0]}" ] || die "pip installed Rackside without its __editable__.rackside-*.pth; run ./setup.sh again"
    rm -rf "$import_root"
    mkdir -p "$import_root"
    ln -s "$here/rackside" "$import_root/rackside"
    printf '%s\n' "$import_root" >"${pth[0]}"
    echo "$hash dev=$dev pi=$on_pi" >"$stamp"
fi

# setuptools, which venv installs beside pip, adds distutils-precedence.pth: a line that imports
# its distutils shim at the start of every Python process in the venv, about 0.5 ms each (issue 11).
# Nothing in Rackside uses distutils, and pip builds in an isolated environment of its own.
rm -f "$venv"/lib/python3*/site-packages/distutils-precedence.pth

# --- The default lexicon -----------------------------------------------------------------------
# ENABLE ships compressed in judge/data; this compiles it once (a no-op when it is up to date).
"$venv/bin/rackside" lexicon install-default || die "could not compile the default lexicon (see above)"

# --- On a Pi: the systemd services (RACKSIDE_SERVICES: "clock", "kiosk", "clock kiosk" or "none") ---
if [ "$on_pi" = 1 ]; then
    "$here/deploy/install-pi.sh" ${RACKSIDE_SERVICES:-clock} \
        || die "could not install the systemd services (see above); run deploy/install-pi.sh again"
fi

say "ready. Start the simulated table clock with: .venv/bin/rackside clock --simulate"
