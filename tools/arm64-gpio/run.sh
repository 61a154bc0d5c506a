#!/bin/bash
# run.sh: the table clock on a real kernel's GPIO. Builds (cached) gpio-sim.ko for the arm64 VM's
# Debian kernel, boots the VM with ../shared/tools/arm64-vm/boot-arm64.sh (VMTEST=this tool's
# vm-gpio-test.sh with its payload), where `rackside clock` runs under its systemd unit on gpiozero's
# lgpio back-end on a gpio-sim chip; then checks on this machine what came out of the image (the
# kernel's GPIO trace, the clock's journal, the rig's log) with check.py. One line per check; exits 0
# only when every check holds. See README.md.
#   sudo tools/arm64-gpio/run.sh                 # from a Rackside checkout with .venv
#   sudo BREAK=digit tools/arm64-gpio/run.sh     # a deliberately broken build: pullup, digit, double
#   sudo POWERCUT=0 tools/arm64-gpio/run.sh      # without the power cut (QEMU killed mid-game, a second boot)
#   CHECK_ONLY=1 tools/arm64-gpio/run.sh         # re-check the last run's results (no VM)
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
REPO=${REPO:-$(git -C "$HERE" rev-parse --show-toplevel)}
WORK=${WORK:-/tmp/rackside-gpio-vm}
VMTOOLS=${VMTOOLS:-$REPO/../shared/tools/arm64-vm}
BREAK=${BREAK:-}
POWERCUT=${POWERCUT:-1}                     # 0: no power cut (one boot, ~2 min shorter)
CPU=${CPU:-cortex-a53}                      # a Pi Zero 2 W / Pi 3 core
REVISION=${REVISION:-902120}                # the revision gpiozero reads (a Pi Zero 2 W's)
LGPIO_WHEEL=lgpio-0.2.2.0-cp311-cp311-manylinux_2_34_aarch64.whl
LGPIO_SHA256=a2f71fb95b149d8ac82c7c6bae70f054f6dc42a006ad35c90c7d8e54921fbcf4
t0=$SECONDS
powercut_missed=0
say() { printf '[%4ds] %s\n' "$((SECONDS - t0))" "$*"; }
export WORK

if [ "${CHECK_ONLY:-0}" != 1 ]; then
    [ "$(id -u)" = 0 ] || { echo "run.sh: needs root (boot-arm64.sh does)" >&2; exit 1; }
    [ -x "$VMTOOLS/boot-arm64.sh" ] || { echo "run.sh: no $VMTOOLS/boot-arm64.sh (set VMTOOLS)" >&2; exit 1; }
    for b in $BREAK; do case "$b" in pullup|digit|double) ;; *) echo "run.sh: BREAK=$b (allowed: pullup, digit, double, or several)" >&2; exit 2 ;; esac; done
    # Debian's arm64 kernel, as boot-arm64.sh fetches it (same folder, so it is fetched once)
    A=(-o Dir::State::Lists="$WORK/apt/lists" -o Dir::Cache="$WORK/apt/cache" -o APT::Architecture=arm64
       -o APT::Architectures::=arm64 -o Dir::State::status=/dev/null -o Debug::NoLocking=1)
    if ! ls "$WORK"/debs/linux-image-*_arm64.deb >/dev/null 2>&1; then
        mkdir -p "$WORK/apt/lists/partial" "$WORK/apt/cache/archives/partial" "$WORK/debs"
        apt-get "${A[@]}" update -qq
        kpkg="$(apt-cache "${A[@]}" depends linux-image-arm64 | awk '/Depends: linux-image-[0-9]/ { print $2; exit }')"
        (cd "$WORK/debs" && apt-get "${A[@]}" download "${kpkg%%:*}" 2>&1 | grep -v unsandboxed)
    fi
    kdeb=$(ls "$WORK"/debs/linux-image-*_arm64.deb | head -1)
    kver=$(basename "$kdeb" | sed 's/^linux-image-\(.*\)_\(.*\)_arm64.deb$/\1/')
    debver=$(basename "$kdeb" | sed 's/^linux-image-\(.*\)_\(.*\)_arm64.deb$/\2/')
    say "kernel $kver ($debver); gpio-sim.ko"
    ko=$("$HERE/build-gpio-sim.sh" "$kver" "$debver")
    mkdir -p "$WORK/wheels"
    if [ ! -s "$WORK/wheels/$LGPIO_WHEEL" ]; then
        "$REPO/.venv/bin/pip" download --quiet --no-deps --only-binary=:all: --platform manylinux_2_34_aarch64 \
            --python-version 3.11 -d "$WORK/wheels" lgpio==0.2.2.0
    fi
    echo "$LGPIO_SHA256  $WORK/wheels/$LGPIO_WHEEL" | sha256sum -c --quiet || { echo "run.sh: lgpio wheel hash differs" >&2; exit 1; }
    # the payload: appended to the VM's test script (boot-arm64.sh copies that one file in)
    pl=$WORK/payload; rm -rf "$pl"; mkdir -p "$pl"
    cp "$ko" "$pl/gpio-sim.ko"; cp "$WORK/wheels/$LGPIO_WHEEL" "$HERE/rig.py" "$HERE/clock.toml" "$pl/"
    printf 'BREAK=%q\nREVISION=%q\nPOWERCUT=%q\nINPUTS="17 27 22 18 20 21"\nDIOS="6 24"\n' "$BREAK" "$REVISION" "$POWERCUT" > "$pl/settings"
    { cat "$HERE/vm-gpio-test.sh"; tar czf - -C "$pl" . | base64; } > "$WORK/vmtest-gpio.sh"
    say "bundle of $REPO"
    rm -f "$WORK/rackside.tar.gz" "$WORK/rackside.tar.gz.sha256"
    (cd "$REPO" && .venv/bin/rackside bundle --out "$WORK/rackside.tar.gz" >/dev/null)
    say "booting the VM (boot-arm64.sh, CPU=$CPU)"
    rm -f "$WORK/serial.log" "$WORK/serial-boot1.log"  # a stale 'POWERCUT now' would cut the new run before it booted
    set +e
    REPO=$REPO UPDATE_TEST=0 VMTEST="$WORK/vmtest-gpio.sh" CPU=$CPU QEMU_TIMEOUT=${QEMU_TIMEOUT:-900} \
        nice -n 10 "$VMTOOLS/boot-arm64.sh" > "$WORK/boot.log" 2>&1 &
    boot=$!
    if [ "$POWERCUT" = 1 ]; then
        # the power cut: QEMU killed (SIGKILL, no shutdown, no sync) 1.5 s after the rig says so,
        # while it presses on; then the same disk boots again (REBUILD=0)
        until grep -qas 'VMTEST POWERCUT now' "$WORK/serial.log" || ! kill -0 "$boot" 2>/dev/null; do sleep 0.5; done
        if grep -qas 'VMTEST POWERCUT now' "$WORK/serial.log"; then
            sleep 1.5
            for t in $(pgrep -P "$boot" -x timeout); do for q in $(pgrep -P "$t"); do say "power cut: kill -9 QEMU ($q)"; kill -9 "$q"; done; done
            wait "$boot"
            cp "$WORK/serial.log" "$WORK/serial-boot1.log"
            say "booting the same disk again, after the power cut"
            REPO=$REPO VMTEST="$WORK/vmtest-gpio.sh" CPU=$CPU QEMU_TIMEOUT=${QEMU_TIMEOUT:-900} REBUILD=0 \
                nice -n 10 "$VMTOOLS/boot-arm64.sh" > "$WORK/boot2.log" 2>&1 &
            boot=$!
        else  # the first boot ended (QEMU_TIMEOUT on a starved host, or a failure) before the cut:
            # booting the disk again would run phase 1 afresh, with no power cut to recover from
            cp "$WORK/serial.log" "$WORK/serial-boot1.log" 2>/dev/null
            say "the first boot ended before the power cut (boot.log, serial-boot1.log; QEMU_TIMEOUT=${QEMU_TIMEOUT:-900} s): no second boot"
            powercut_missed=1
        fi
    fi
    wait "$boot"
    set -e
    grep -h '^VMTEST' "$WORK"/results/vmtest/phase1.log 2>/dev/null || tail -20 "$WORK/boot.log"
    say "VM done"
fi
set +e
"$REPO/.venv/bin/python" "$HERE/check.py" "$WORK/results/vmtest" --cpu "$CPU"
rc=$?
set -e
if [ "$powercut_missed" = 1 ]; then
    echo "run.sh: the first boot never reached the power cut (see $WORK/serial-boot1.log)"; rc=4
fi
if grep -qs 'did not patch' "$WORK/results/vmtest/phase1.log"; then
    echo "run.sh: BREAK=$BREAK was asked for but not applied in the VM (phase1.log)"; rc=3
fi
say "run.sh: exit $rc"
exit $rc
