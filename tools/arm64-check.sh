#!/usr/bin/env bash
# Proves the offline bundle on arm64 Debian (what Raspberry Pi OS is built on), under emulation:
#
#   sudo tools/arm64-check.sh                 build bundles from this checkout, then check them
#   sudo tools/arm64-check.sh --bundle FILE   install FILE as the first version instead
#
# 1. An arm64 Debian bookworm root made once with `debootstrap --arch=arm64 --foreign` and finished
#    under qemu-user-static (binfmt), cached outside the repository ($RACKSIDE_ARM64_CACHE,
#    default /var/cache/rackside-arm64), and copied afresh for every run: a clean root each time.
# 2. Three bundles built on this machine (the only step that uses the network: PyPI's aarch64
#    wheels): v1 and v2 from this checkout, and v3 whose sd_notify never says READY=1.
# 3. In the root, with the network switched off (`unshare -n` around the chroot): sha256sum -c and
#    install v1; the clock's simulator smoke test (`rackside clock --simulate --headless` reports
#    READY=1, as the switch checks) and the core tests (clock, journal, lexicon, adjudication,
#    the firmware end to end) with the bundle's venv; update to v2; v3 rolls back to v2.
#
# Prints each step's time and writes the whole transcript to $RACKSIDE_ARM64_CACHE/last-run.log.
# Exit status 0 only when every step did what it should. Needs root (debootstrap, chroot, mounts)
# and apt for debootstrap, qemu-user-static and binfmt-support when they are missing.
# docs/deploy.md records the last result and how long it takes.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cache="${RACKSIDE_ARM64_CACHE:-/var/cache/rackside-arm64}"
suite=bookworm
mirror="${RACKSIDE_DEBIAN_MIRROR:-http://deb.debian.org/debian}"
first_bundle=""
while [ $# -gt 0 ]; do
    case "$1" in
        --bundle) first_bundle="$(realpath "$2")"; shift ;;
        -h|--help) sed -n '2,22p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "arm64-check.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
    esac
    shift
done
[ "$(id -u)" = 0 ] || { echo "arm64-check.sh: needs root (debootstrap, chroot): sudo $0" >&2; exit 1; }

mkdir -p "$cache"
log="$cache/last-run.log"
exec > >(tee "$log") 2>&1
start_all=$SECONDS
step_start=$SECONDS
step() { printf '\n=== %s (at +%ds)\n' "$*" "$((SECONDS - start_all))"; step_start=$SECONDS; }
took() { printf -- '--- took %ds\n' "$((SECONDS - step_start))"; }
fail() { printf 'arm64-check.sh: FAILED: %s\n' "$*"; exit 1; }

# --- Tools and emulation ---------------------------------------------------------------------------
step "tools: debootstrap, qemu-user-static, binfmt"
missing=()
command -v debootstrap >/dev/null || missing+=(debootstrap)
[ -x /usr/bin/qemu-aarch64-static ] || missing+=(qemu-user-static)
command -v update-binfmts >/dev/null || missing+=(binfmt-support)
if [ "${#missing[@]}" -gt 0 ]; then
    apt-get install -y "${missing[@]}" >/dev/null || { apt-get update -qq && apt-get install -y "${missing[@]}" >/dev/null; }
fi
[ -e /proc/sys/fs/binfmt_misc/register ] || mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc
update-binfmts --enable qemu-aarch64 >/dev/null 2>&1 || true
grep -q '^flags: .*F' /proc/sys/fs/binfmt_misc/qemu-aarch64 2>/dev/null \
    || fail "binfmt has no qemu-aarch64 entry with the F flag (qemu-user-static registers one)"
took

# --- The arm64 root, made once ---------------------------------------------------------------------
base="$cache/$suite-base"
if [ ! -f "$base/.complete" ]; then
    step "debootstrap arm64 $suite (once; cached in $base)"
    rm -rf "$base"
    # What Raspberry Pi OS Lite has that the installer uses: python3 with venv, systemd's systemctl.
    debootstrap --arch=arm64 --foreign --variant=minbase --include=python3,python3-venv,systemd \
        "$suite" "$base" "$mirror"
    chroot "$base" /debootstrap/debootstrap --second-stage
    touch "$base/.complete"
    took
fi
root="$cache/run-root"
step "a fresh copy of the arm64 root"
mounted=()
cleanup() {
    local m
    for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do umount -l "${mounted[$i]}" 2>/dev/null || true; done
}
trap cleanup EXIT
rm -rf "$root"
cp -a "$base" "$root"
took

# --- Bundles and test wheels, built here (the network's only use) ------------------------------------
work="$cache/work"
rm -rf "$work"
mkdir -p "$work/bundles" "$work/src"
rackside=("$repo/.venv/bin/python" "$repo/bin/rackside")
step "bundles v1, v2, and v3 (never ready)"
if [ -n "$first_bundle" ]; then
    cp "$first_bundle" "$first_bundle.sha256" "$work/bundles/"
    v1="$(basename "$first_bundle")"
else
    "${rackside[@]}" bundle --out "$work/bundles/rackside-v1.tar.gz" --label arm64.v1 || fail "rackside bundle (v1)"
    v1=rackside-v1.tar.gz
fi
# v2 and v3 take v1's wheels (no second download); v3's clock never says READY=1.
mkdir -p "$work/v1" && tar xzf "$work/bundles/$v1" -C "$work/v1"
wheels="$(echo "$work"/v1/rackside-*/wheelhouse)"
git -C "$repo" ls-files -z --cached --others --exclude-standard | (cd "$repo" && xargs -0 cp -P --parents -t "$work/src" 2>/dev/null) \
    || fail "copying the checkout"
cp -a "$work/src" "$work/src-v3"
sed -i 's/return self.notify("READY=1"/return False and self.notify("READY=1"/' "$work/src-v3/hardware/sdnotify.py"
grep -q 'return False and self.notify("READY=1"' "$work/src-v3/hardware/sdnotify.py" || fail "could not break v3"
for v in v2 v3; do
    src="$work/src"; [ "$v" = v3 ] && src="$work/src-v3"
    "${rackside[@]}" bundle --out "$work/bundles/rackside-$v.tar.gz" --source "$src" --label "arm64.$v" \
        --wheelhouse "$wheels" --python 3.11 --python 3.13 --machine aarch64 >/dev/null || fail "rackside bundle ($v)"
done
ls -l "$work/bundles"
took
step "test wheels (pytest, hypothesis) for aarch64 CPython 3.11"
mkdir -p "$work/test-wheels"
"$repo/.venv/bin/python" -m pip download --disable-pip-version-check --quiet --only-binary=:all: --implementation cp \
    --python-version 3.11 --platform manylinux2014_aarch64 --platform manylinux_2_17_aarch64 -d "$work/test-wheels" \
    "$(grep '^pytest==' "$repo/requirements-dev.txt")" "$(grep '^hypothesis==' "$repo/requirements-dev.txt")" \
    || fail "pip download of the test wheels"
took

# --- Into the root ----------------------------------------------------------------------------------
mkdir -p "$root/root/bundles" "$root/root/rackside-tests"
cp "$work/bundles"/* "$root/root/bundles/"
cp -a "$work/test-wheels" "$root/root/test-wheels"
cp -a "$repo/tests" "$repo/bench" "$repo/pyproject.toml" "$root/root/rackside-tests/"  # some tests run a bench script
for m in proc sys dev; do
    case "$m" in
        proc) mount -t proc proc "$root/proc" ;;
        sys) mount -t sysfs sys "$root/sys" ;;
        dev) mount --bind /dev "$root/dev" ;;
    esac
    mounted+=("$root/$m")
done
# Every command in the root runs with no network at all: its own network namespace has only a
# loopback device, and that one down.
in_root() { unshare -n chroot "$root" /usr/bin/env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 /bin/bash -c "$1"; }

step "no network in the root"
# /proc/net/dev lists the network devices of the reader's own namespace.
in_root 'cat /proc/net/dev; [ "$(tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d " ")" = lo ] && uname -m && python3 -V' \
    || fail "the root has a network device besides loopback"
took

step "install v1 (sha256sum -c, unpack, install.sh)"
top1="$(tar tzf "$work/bundles/$v1" | awk -F/ 'NR == 1 { print $1 }')"  # awk reads it all: no SIGPIPE for tar
in_root "cd /root/bundles && sha256sum -c $v1.sha256 && tar xzf $v1 && ./$top1/install.sh" || fail "install v1"
in_root 'rackside --version && readlink /opt/rackside/current && grep ExecStart= /etc/systemd/system/rackside-clock.service && systemctl is-enabled rackside-clock.service' \
    || fail "v1 is not current, or the clock's service is not enabled"
took

step "the clock's simulator smoke test: READY=1 from rackside clock --simulate --headless"
in_root '/opt/rackside/current/.venv/bin/python -c "
from pathlib import Path
from rackside.switch import simulated_ready
ok, status = simulated_ready(Path(\"/opt/rackside/current/.venv/bin/rackside\"), 120)
print(\"ready:\", ok, status)
raise SystemExit(0 if ok else 1)
"' || fail "the simulated clock did not report READY=1"
took

step "core tests under emulation (clock, journal, lexicon, adjudication, firmware end to end)"
in_root '/opt/rackside/current/.venv/bin/python -m pip install --quiet --disable-pip-version-check --no-index \
    --find-links /root/test-wheels --target /root/test-libs pytest hypothesis' || fail "installing pytest offline"
in_root 'cd /root/rackside-tests && PYTHONPATH=/root/test-libs /opt/rackside/current/.venv/bin/python -m pytest -q -p no:cacheprovider \
    tests/test_clock_core.py tests/test_journal.py tests/test_lexicon.py tests/test_adjudication.py tests/test_firmware_e2e.py' \
    || fail "core tests"
took

step "update to v2 beside v1"
in_root 'cd /root/bundles && sha256sum -c rackside-v2.tar.gz.sha256 && tar xzf rackside-v2.tar.gz && ./rackside-0.1.0+arm64.v2/install.sh' \
    || fail "update to v2"
in_root '[ "$(readlink /opt/rackside/current)" = 0.1.0+arm64.v2 ] && rackside --version && ls -l /opt/rackside' || fail "v2 is not current"
took

step "v3 never reports READY=1: rolls back to v2"
status=0
in_root 'cd /root/bundles && tar xzf rackside-v3.tar.gz && ./rackside-0.1.0+arm64.v3/install.sh --ready-timeout 60' || status=$?
[ "$status" = 1 ] || fail "installing v3 exited $status, not 1"
in_root '[ "$(readlink /opt/rackside/current)" = 0.1.0+arm64.v2 ] && rackside --version' || fail "v3 did not roll back to v2"
took

printf '\narm64-check.sh: PASSED in %ds (transcript: %s)\n' "$((SECONDS - start_all))" "$log"
