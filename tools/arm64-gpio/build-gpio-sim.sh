#!/bin/bash
# build-gpio-sim.sh: build gpio-sim.ko (the kernel's software GPIO chip) for Debian bookworm's arm64
# kernel, out of tree, on this (amd64) machine, from Debian's own packages only, nothing installed:
#   linux-headers-$KVER (arm64) and -common, the host's linux-kbuild-6.1 and gcc-12-aarch64-linux-gnu
#   (with cpp, binutils and libgcc-dev for the cross compiler): `apt-get download` + `dpkg-deb -x`;
#   three files of linux-source-6.1 at the kernel's exact version: drivers/gpio/gpio-sim.c, its
#   private drivers/gpio/gpiolib.h and kernel/irq/irq_sim.c.
# gpio-sim-matrix.patch (this folder) adds a keypad matrix to the chip: a `sim_matrix` attribute
# naming the closed keys as ROW:COLUMN line pairs; a column joined by a closed key to a row driven
# low reads low, with its edge interrupt, in the same call that drove the row (README.md: the keypad).
# Debian's arm64 kernel has CONFIG_GPIO_CDEV=y and CONFIG_CONFIGFS_FS=m but no CONFIG_GPIO_SIM, nor
# CONFIG_IRQ_SIM (which gpio-sim selects), so irq_sim.c is built into the same module; its one call
# of the unexported irq_to_desc() becomes the exported generic_handle_irq() (the same handler,
# handle_simple_irq, found through the descriptor). The headers' Makefile includes an absolute
# /usr/src/ path, rewritten to the extracted copy. CONFIG_MODULE_SIG_FORCE is not set: the unsigned
# module loads (the kernel is tainted "OE", which is fine in a test VM).
#
# Prints the path of the module. Cached: $KB/gpio-sim-$KVER-<the patch's sha256>.ko is reused when present.
# Usage: build-gpio-sim.sh KVER (e.g. 6.1.0-57-arm64) [DEBIAN_VERSION (e.g. 6.1.192-3)]
set -euo pipefail
KVER=$1
WORK=${WORK:-/tmp/rackside-gpio-vm}
KB=$WORK/kbuild
HERE=$(cd "$(dirname "$0")" && pwd)
PATCH=$HERE/gpio-sim-matrix.patch
OUT=$KB/gpio-sim-$KVER-$(sha256sum "$PATCH" | cut -c1-12).ko   # a changed patch builds again
say() { echo "build-gpio-sim: $*" >&2; }
if [ -s "$OUT" ]; then say "cached $OUT"; echo "$OUT"; exit 0; fi
t0=$SECONDS
mkdir -p "$KB/debs" "$KB/apt/lists/partial" "$KB/apt/cache/archives/partial"
A=(-o Dir::State::Lists="$KB/apt/lists" -o Dir::Cache="$KB/apt/cache" -o APT::Architecture=arm64
   -o APT::Architectures::=arm64 -o Dir::State::status=/dev/null -o Debug::NoLocking=1)
common=${KVER%-arm64}-common
DEBVER=${2:-}
if [ -z "$DEBVER" ]; then
    apt-get "${A[@]}" update -qq
    DEBVER=$(apt-cache "${A[@]}" show "linux-headers-$KVER" | awk '/^Version:/ { print $2; exit }')
fi
cd "$KB/debs"
ls linux-headers-"$KVER"_*.deb >/dev/null 2>&1 || {
    [ -s "$KB/apt/lists/lock" ] || apt-get "${A[@]}" update -qq
    apt-get "${A[@]}" download "linux-headers-$KVER" "linux-headers-$common" 2>&1 | grep -v unsandboxed >&2 || true; }
ls linux-kbuild-6.1_*.deb gcc-12-aarch64-linux-gnu_*.deb >/dev/null 2>&1 || {
    apt-get update -qq
    apt-get download "linux-kbuild-6.1=$DEBVER" gcc-12-aarch64-linux-gnu cpp-12-aarch64-linux-gnu binutils-aarch64-linux-gnu \
        gcc-12-aarch64-linux-gnu-base libgcc-12-dev-arm64-cross 2>&1 | grep -v unsandboxed >&2 || true; }
ls linux-source-6.1_"$DEBVER"_all.deb >/dev/null 2>&1 || apt-get download "linux-source-6.1=$DEBVER" 2>&1 | grep -v unsandboxed >&2 || true
say "packages: $(ls | tr '\n' ' ')"

R=$KB/root; rm -rf "$R"; mkdir -p "$R"
for d in *.deb; do case $d in linux-source-*) ;; *) dpkg-deb -x "$d" "$R" ;; esac; done
S=$KB/src; rm -rf "$S"; mkdir -p "$S"
files=(drivers/gpio/gpio-sim.c drivers/gpio/gpiolib.h kernel/irq/irq_sim.c)
dpkg-deb --fsys-tarfile linux-source-6.1_"$DEBVER"_all.deb | tar x -O ./usr/src/linux-source-6.1.tar.xz | xz -dc \
    | tar x -C "$S" --strip-components=1 "${files[@]/#/linux-source-6.1/}"

patch -s -d "$S" -p1 < "$PATCH"
M=$KB/module; rm -rf "$M"; mkdir -p "$M"
cp "$S/drivers/gpio/gpio-sim.c" "$S/drivers/gpio/gpiolib.h" "$S/kernel/irq/irq_sim.c" "$M/"
grep -q 'handle_simple_irq(irq_to_desc(irqnum));' "$M/irq_sim.c" || { say "irq_sim.c: irq_to_desc call not found"; exit 1; }
sed -i 's/handle_simple_irq(irq_to_desc(irqnum));/generic_handle_irq(irqnum);/' "$M/irq_sim.c"
cat > "$M/Kbuild" <<'KB'
obj-m := gpio-sim.o
gpio-sim-y := gpio-sim-core.o irq_sim.o
KB
mv "$M/gpio-sim.c" "$M/gpio-sim-core.c"
H=$R/usr/src/linux-headers-$KVER
sed -i "s|^include /usr/src/|include $R/usr/src/|" "$H/Makefile"
export PATH="$R/usr/bin:$PATH" LD_LIBRARY_PATH="$R/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
make -s -C "$H" M="$M" ARCH=arm64 CROSS_COMPILE=aarch64-linux-gnu- CC=aarch64-linux-gnu-gcc-12 modules >&2
aarch64-linux-gnu-strip --strip-debug -o "$OUT" "$M/gpio-sim.ko"
say "built $OUT in $((SECONDS - t0)) s ($(stat -c %s "$OUT") bytes, vermagic: $(modinfo -F vermagic "$OUT" 2>/dev/null || strings "$OUT" | grep -m1 vermagic=))"
echo "$OUT"
