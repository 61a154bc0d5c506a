#!/bin/bash
# Runs inside the arm64 VM as vmtest.service (boot-arm64.sh installs it; run.sh appends the payload
# below the __PAYLOAD__ line: gpio-sim.ko, the lgpio wheel, rig.py, settings). One boot:
# 1. the chip: load configfs and gpio-sim.ko, make a gpio-sim chip with 28 lines named GPIO0..GPIO27
#    (as a Pi's header chip), open it to the clock's user;
# 2. the clock: install the bundle with install.sh under systemd, its config with [pins] chip = the
#    gpio-sim chip, a drop-in that runs `rackside clock` (not --simulate) and gives it a Pi's
#    /proc/cpuinfo Revision line (gpiozero refuses a board it cannot name; QEMU virt has none);
# 3. the kernel's gpio:gpio_value and gpio:gpio_direction trace on (trace_clock mono), rig.py plays a
#    game through the lines' sysfs `pull`, reads the outputs' `value`;
# 4. copies the trace, the clock's journal and logs to /root/vmtest (run.sh reads them from the image).
# BREAK= (settings) patches the installed clock first: pullup, digit or double (a deliberately
# broken build, to show the checks fail).
set -u
OUT=/root/vmtest; mkdir -p "$OUT"
if [ -e "$OUT/done" ]; then systemctl poweroff; exit 0; fi
exec > >(tee -a "$OUT/phase1.log") 2>&1
say() { echo "VMTEST $*"; }
P=/root/gpio-payload; rm -rf "$P"; mkdir -p "$P"
sed '1,/^__PAYLOAD__$/d' "$0" | base64 -d | tar xz -C "$P" || say "FAIL: no payload"
. "$P/settings"
BOOT2=0; [ -e "$OUT/powercut.armed" ] && BOOT2=1  # 4.: this boot follows the power cut
T=/sys/kernel/tracing
trace_on() { mountpoint -q $T || mount -t tracefs nodev $T
             echo mono > $T/trace_clock; echo 8192 > $T/buffer_size_kb; : > $T/trace
             echo 1 > $T/events/gpio/gpio_value/enable; echo 1 > $T/events/gpio/gpio_direction/enable; echo 1 > $T/tracing_on; }
clock_active() { for i in $(seq 1 120); do [ "$(systemctl is-active rackside-clock.service)" = active ] && return 0; sleep 1; done; return 1; }
finish() { cp -a /var/lib/rackside "$OUT/state" 2>/dev/null; journalctl -b --no-pager > "$OUT/journal.txt" 2>&1;
           touch "$OUT/done"; sync; say "phase 1 done at uptime $(cut -d' ' -f1 /proc/uptime) s: powering off"; systemctl poweroff; exit 0; }
say "start: $(uname -srm), CPU: $(grep -m1 -E 'CPU part|model name' /proc/cpuinfo), $(nproc) CPUs"
systemctl is-system-running --wait >/dev/null
t=$(date +%s.%N)
# after the power cut the clock (enabled) starts at boot and restarts until the chip is back: trace first
[ "$BOOT2" = 1 ] && { say "boot 2, after the power cut"; trace_on; }

# --- 1. the chip ---------------------------------------------------------------------------------
modprobe configfs; mountpoint -q /sys/kernel/config || mount -t configfs none /sys/kernel/config
insmod "$P/gpio-sim.ko" || { say "FAIL: insmod gpio-sim.ko"; finish; }
C=/sys/kernel/config/gpio-sim/rackside
mkdir "$C" "$C/bank0"
echo 28 > "$C/bank0/num_lines"
echo rackside-header > "$C/bank0/label"
for i in $(seq 0 27); do mkdir "$C/bank0/line$i"; echo "GPIO$i" > "$C/bank0/line$i/name"; done
echo 1 > "$C/live"
CHIP=$(cat "$C/bank0/chip_name"); DEV=$(cat "$C/dev_name")
N=${CHIP#gpiochip}
SYS=/sys/devices/platform/$DEV/$CHIP
say "chip: $CHIP ($DEV, label $(cat /sys/bus/gpio/devices/$CHIP/../label 2>/dev/null || true)), sysfs $SYS, made in $(echo "$(date +%s.%N) - $t" | bc 2>/dev/null || echo ?) s"
for c in /sys/class/gpio/gpiochip*; do echo "gpio base: $(cat $c/label) base=$(cat $c/base) ngpio=$(cat $c/ngpio)"; done | tee "$OUT/chips.txt"
echo "$CHIP $DEV $SYS" > "$OUT/chip.txt"
[ -e "$SYS/sim_matrix" ] && say "keypad matrix: $SYS/sim_matrix (gpio-sim-matrix.patch)" || say "FAIL: no sim_matrix (the module lacks gpio-sim-matrix.patch)"
# the line names, as gpioinfo would list them (from the kernel's debugfs)
mountpoint -q /sys/kernel/debug || mount -t debugfs none /sys/kernel/debug
[ "$BOOT2" = 1 ] || cat /sys/kernel/debug/gpio > "$OUT/debug-gpio-before.txt" 2>&1

if [ "$BOOT2" = 1 ]; then
    chmod 0666 /dev/$CHIP
    t=$(date +%s)
    clock_active; say "boot 2: clock $(systemctl is-active rackside-clock.service) $(( $(date +%s) - t )) s after the chip came back"
    chrt -f 30 /opt/rackside/current/.venv/bin/python "$P/rig.py" "$SYS" "$OUT" after || say "rig.py after: exit $?"
    echo 0 > $T/tracing_on; cp $T/trace "$OUT/trace2.txt"
    journalctl -u rackside-clock.service -b --no-pager > "$OUT/clock2.log"
    finish
fi

# Before the clock claims them, every input of the clock is pulled DOWN: only the clock's own bias
# request (pull_up=True) can make them read pull-up. Each TM1637 DIO is pulled down: the chip
# acknowledging (it holds DIO low whenever the Pi lets go of it; the clock's dio_pull = "off").
for g in $INPUTS $DIOS; do echo pull-down > "$SYS/sim_gpio$g/pull"; done

# --- 2. the clock --------------------------------------------------------------------------------
python3 -m zipfile -e "$P"/lgpio-*.whl /usr/local/lib/python3.11/dist-packages/ && say "lgpio wheel in the system's site packages (as Raspberry Pi OS's python3-lgpio)"
cd /root/bundles || finish
top="$(tar tzf rackside.tar.gz | awk -F/ 'NR == 1 { print $1 }')"
tar xzf rackside.tar.gz
t=$(date +%s); "./$top/install.sh" > "$OUT/install.log" 2>&1; rc=$?
say "install.sh exit $rc after $(( $(date +%s) - t )) s"
systemctl stop rackside-clock.service
rm -f /etc/systemd/system/rackside-clock.service.d/10-vm-simulate.conf
mkdir -p /etc/rackside-vm
{ cat /proc/cpuinfo; echo "Revision	: $REVISION"; } > /etc/rackside-vm/cpuinfo
cat > /etc/systemd/system/rackside-clock.service.d/20-gpio-sim.conf <<UNIT
# tools/arm64-gpio: the real clock on the VM's gpio-sim chip. gpiozero names the board from
# /proc/cpuinfo's Revision line, which QEMU's virt machine has not: this unit's view of it has one.
[Service]
ExecStart=
ExecStart=/opt/rackside/current/.venv/bin/rackside clock
BindReadOnlyPaths=/etc/rackside-vm/cpuinfo:/proc/cpuinfo
UNIT
# the clock's user reaches the chip as a Pi's "gpio" group does
chgrp "$(systemctl show -p Group --value rackside-clock.service || echo root)" /dev/$CHIP 2>/dev/null; chmod 0666 /dev/$CHIP
sed "s/@CHIP@/$N/" "$P/clock.toml" > /etc/rackside/clock.toml
SITE=$(echo /opt/rackside/current/.venv/lib/python3*/site-packages/rackside)
for b in $BREAK; do case "$b" in
  pullup) sed -i 's/pull_up=True,/pull_up=False,/' "$SITE/hardware/board.py" ;;
  digit)  sed -i 's/    frame = sevenseg.frame_of(shown)/    frame = sevenseg.frame_of(shown.replace("0", "8") if isinstance(shown, str) else shown)/' "$SITE/hardware/drivers/tm1637.py" ;;
  double) sed -i 's/accepted = down and t_ns - self.raw_since_ns >= self.settle_ns/accepted = down/' "$SITE/firmware/debounce.py" ;;
esac; done
[ -n "$BREAK" ] && { say "BROKEN BUILD: $BREAK"; n=$(grep -rn 'pull_up=False,\|replace("0", "8")\|accepted = down *\(#.*\)\?$' "$SITE" --include=*.py | tee /dev/stderr | wc -l)
                    [ "$n" -ge "$(echo $BREAK | wc -w)" ] || say "FAIL: BREAK=$BREAK did not patch the installed clock (its code changed?)"; }
trace_on
systemctl daemon-reload
t=$(date +%s.%N)
systemctl start rackside-clock.service
say "clock: $(systemctl show -p ActiveState,SubState --value rackside-clock.service | paste -sd/) after $(python3 -c "import time; print(round(time.time() - $t, 1))") s"
systemctl status rackside-clock.service --no-pager -l | head -20
# the buttons' interrupts (irq_sim's, one per line the clock watches for edges): traced too, so the
# kernel's own time of each edge is in the trace beside the clock's journal
cat /proc/interrupts > "$OUT/interrupts.txt"
irqs=$(awk '/sim/ && /Edge/ { sub(":", "", $1); printf "%s%s", sep, "irq == " $1; sep = " || " }' /proc/interrupts)
[ -n "$irqs" ] && echo "$irqs" > $T/events/irq/irq_handler_entry/filter && echo 1 > $T/events/irq/irq_handler_entry/enable
say "button interrupts traced: ${irqs:-none found}"
cat /sys/kernel/debug/gpio > "$OUT/debug-gpio-clock.txt" 2>&1

# --- 3. the game through the lines ---------------------------------------------------------------
# the rig at a real-time priority above the clock's (SCHED_FIFO 20): a button's bounce is not slowed by
# the Pi's CPU, and the clock's TM1637 bit-banging would otherwise stretch it into real presses
chrt -f 30 /opt/rackside/current/.venv/bin/python "$P/rig.py" "$SYS" "$OUT" || say "rig.py exit $?"
echo 0 > $T/tracing_on
cp $T/trace "$OUT/trace.txt"
say "trace: $(grep -c gpio_value "$OUT/trace.txt") gpio_value events, $(grep -c 'overrun\|LOST' "$OUT/trace.txt") lost-event lines"
journalctl -u rackside-clock.service -b --no-pager > "$OUT/clock.log"
tail -15 "$OUT/clock.log"

# --- 5. the self-test on the same back-end, the rig as the builder ------------------------------------
systemctl stop rackside-clock.service
t=$(date +%s)
# bounded: on a broken build (BREAK=pullup: every button reads pressed) the self-test can wait for ever
( cd /tmp && RACKSIDE_CONFIG_DIR=/etc/rackside LG_WD=/tmp timeout 150 unshare -m sh -c \
    'mount --bind /etc/rackside-vm/cpuinfo /proc/cpuinfo && exec /opt/rackside/current/.venv/bin/rackside clock selftest --timeout 20' \
    > "$OUT/selftest.txt" 2>&1; echo "exit $?" >> "$OUT/selftest.txt" ) &
stpid=$!
chrt -f 30 /opt/rackside/current/.venv/bin/python "$P/rig.py" "$SYS" "$OUT" selftest "$OUT/selftest.txt"
wait $stpid  # (a bare `wait` would also wait for the tee of this script's own output)
say "selftest: $(tail -2 "$OUT/selftest.txt" | paste -sd' ') after $(( $(date +%s) - t )) s"

# --- 4. a power cut mid-game: the clock again (it restores its game), presses, then run.sh kills QEMU --
if [ "${POWERCUT:-0}" = 1 ]; then
    systemctl start rackside-clock.service; clock_active
    say "clock restarted for the power cut: $(systemctl is-active rackside-clock.service)"
    touch "$OUT/powercut.armed"; sync
    chrt -f 30 /opt/rackside/current/.venv/bin/python "$P/rig.py" "$SYS" "$OUT" powercut
    say "FAIL: no power cut came"
fi
finish
exit 0
__PAYLOAD__
