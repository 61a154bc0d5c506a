#!/usr/bin/env bash
# Installs Rackside's systemd services on a Raspberry Pi: run by setup.sh on a Pi, or by hand.
# Safe to run again: it changes only what differs, and never overwrites a director's config.
#
#   deploy/install-pi.sh              the table clock (rackside-clock.service)
#   deploy/install-pi.sh kiosk        the challenge station (rackside-kiosk.service)
#   deploy/install-pi.sh clock kiosk  both
#   deploy/install-pi.sh broker       the hall's broker (rackside-broker.service; docs/hall.md)
#   deploy/install-pi.sh hall-station a station's challenges to the hall (rackside-hall-station.service)
#   deploy/install-pi.sh none         install every unit, enable none
#
# It installs every unit in /etc/systemd/system with this checkout's path filled in, copies the
# default configs to /etc/rackside/ when they are absent, enables and starts the chosen services
# (restarting them if their unit changed) and says what it did. Needs root: it re-runs itself
# through sudo. The services run as the owner of this checkout. See docs/deploy.md.
#
# For tests: RACKSIDE_DESTDIR=DIR installs under DIR instead of / (no root needed), and
# RACKSIDE_SYSTEMCTL=CMD runs CMD instead of systemctl. Where systemd is not running (a chroot
# preparing an image) and no RACKSIDE_SYSTEMCTL is given, services are enabled, not started.
# For a bundle's install.sh (deploy/bundle-install.sh): RACKSIDE_REPO=PATH is the path the units
# run from (/opt/rackside/current, the link to the running version; files are read from this
# script's own checkout), RACKSIDE_USER=NAME the services' user, and RACKSIDE_NO_START=1 enables
# the chosen services without starting or restarting them (the bundle's switch starts them).
set -euo pipefail

say() { printf 'install-pi.sh: %s\n' "$*"; }
die() { printf 'install-pi.sh: error: %s\n' "$*" >&2; exit 1; }

src="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"  # the files: templates, default configs, venv
repo="${RACKSIDE_REPO:-$src}"                                # the path the units name
dest="${RACKSIDE_DESTDIR:-}"
no_start="${RACKSIDE_NO_START:-0}"
read -r -a systemctl <<<"${RACKSIDE_SYSTEMCTL:-systemctl}"
# No systemd running here (an image being prepared in a chroot, a container): the units are
# enabled on the file system with `systemctl --root` (it needs no manager), nothing is reloaded,
# started or restarted, and they start at the next boot.
offline=0
if [ -z "${RACKSIDE_SYSTEMCTL:-}" ] && [ ! -d /run/systemd/system ]; then
    offline=1
    systemctl=(systemctl "--root=${dest:-/}")
fi

roles=()
for arg in "${@:-clock}"; do
    case "$arg" in
        clock|kiosk|broker|hall-station) roles+=("$arg") ;;
        none) ;;
        -h|--help) sed -n '2,18p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) die "unknown service '$arg' (allowed: clock, kiosk, broker, hall-station, none, --help)" ;;
    esac
done

if [ -z "$dest" ] && [ "$(id -u)" != 0 ]; then
    command -v sudo >/dev/null 2>&1 || die "needs root, and sudo is not installed: run it as root"
    exec sudo --preserve-env=RACKSIDE_SYSTEMCTL,RACKSIDE_REPO,RACKSIDE_USER,RACKSIDE_NO_START "$0" "$@"
fi

# systemd unit paths are unquoted: refuse a checkout path that would need quoting or escaping.
[[ "$repo" =~ ^/[A-Za-z0-9._/+-]+$ ]] || die "the checkout's path '$repo' has spaces or special characters; move it (e.g. to /opt/rackside)"
[ -x "$src/.venv/bin/rackside" ] || die "$src/.venv/bin/rackside is missing: run ./setup.sh first"

user="${RACKSIDE_USER:-$(stat -c %U "$src")}"
id -u "$user" >/dev/null 2>&1 || die "the services' user '$user' does not exist"
[ "$user" = root ] && say "warning: the services will run as root ($src belongs to root); a checkout owned by an ordinary user is safer"
# The groups that give access to GPIO, serial ports, the screen and touch input, where they exist.
groups=()
for g in gpio dialout video render input; do
    getent group "$g" >/dev/null 2>&1 && groups+=("$g")
done
[ "${#groups[@]}" -gt 0 ] || groups=("$(id -gn "$user")")

# The broker's service runs Debian's Mosquitto with the hall's own config: install the package when
# the broker is asked for, and stop Debian's own mosquitto.service, which rackside-broker.service
# replaces (Conflicts=mosquitto.service). Not in a staging run (RACKSIDE_DESTDIR).
for r in "${roles[@]+"${roles[@]}"}"; do
    if [ "$r" = broker ] && [ -z "$dest" ] && [ ! -x /usr/sbin/mosquitto ]; then
        say "installing Debian's mosquitto for the hall's broker"
        { apt-get install -y mosquitto >/dev/null || { apt-get update -qq && apt-get install -y mosquitto >/dev/null; }; } \
            || die "could not install mosquitto with apt; install it (sudo apt install mosquitto), then run this again"
        "${systemctl[@]}" disable --now mosquitto.service >/dev/null 2>&1 || true
    fi
done

unitdir="$dest/etc/systemd/system"
confdir="$dest/etc/rackside"
mkdir -p "$unitdir" "$confdir"

changed_units=()
# rackside-update.path/.service: updates from the console (docs/fleet.md); the clock's unit wants the path unit.
# rackside-recover.service: back to the known-good version if a switch died (rackside/switch.py).
for unit in rackside-clock.service rackside-kiosk.service rackside-broker.service rackside-hall-station.service \
        rackside-update.path rackside-update.service rackside-recover.service; do
    tmp="$(mktemp)"
    sed -e "s|@REPO@|$repo|g" -e "s|@USER@|$user|g" -e "s|@GROUPS@|${groups[*]}|g" "$src/deploy/$unit" >"$tmp"
    if cmp -s "$tmp" "$unitdir/$unit"; then
        say "unchanged: $unitdir/$unit"
        rm -f "$tmp"
    else
        install -m 0644 "$tmp" "$unitdir/$unit"
        rm -f "$tmp"
        say "installed: $unitdir/$unit (runs as $user, groups ${groups[*]})"
        changed_units+=("$unit")
    fi
done

# Default configs, only where the director has none yet. station.toml holds the director's PIN
# hash: readable by root and the service's group only (0640 root:<group>), kept so when it exists.
service_group="$(id -gn "$user")"
while read -r default target mode; do
    owner=()
    if [ "$mode" = 0640 ] && [ "$(id -u)" = 0 ]; then
        owner=(-o root -g "$service_group")
    fi
    if [ ! -f "$src/$default" ]; then
        say "skipped: $src/$default does not exist in this checkout"
    elif [ -e "$confdir/$target" ]; then
        say "kept: $confdir/$target (already there; the default is $src/$default)"
        if [ "$mode" = 0640 ]; then
            chmod 0640 "$confdir/$target"
            [ "${#owner[@]}" -eq 0 ] || chown "root:$service_group" "$confdir/$target"
        fi
    else
        install -m "$mode" "${owner[@]+"${owner[@]}"}" "$src/$default" "$confdir/$target"
        say "copied: $src/$default -> $confdir/$target (mode $mode)"
    fi
done <<'CONFIGS'
firmware/clock.toml clock.toml 0644
kiosk/default-station.toml station.toml 0640
CONFIGS

# The clock may use the network only when its config puts it on a hall ([hall] in clock.toml): a
# drop-in widens the unit's RestrictAddressFamilies=AF_UNIX; without [hall] it is removed.
dropin="$unitdir/rackside-clock.service.d/hall.conf"
if grep -qs '^[[:space:]]*\[hall\]' "$confdir/clock.toml"; then
    want="$(printf '%s\n' "# Written by deploy/install-pi.sh: clock.toml has a [hall] section (docs/hall.md)." \
        "[Service]" "RestrictAddressFamilies=AF_UNIX AF_INET AF_INET6 AF_NETLINK")"
    if [ "$(cat "$dropin" 2>/dev/null)" != "$want" ]; then
        mkdir -p "$(dirname "$dropin")"
        printf '%s\n' "$want" >"$dropin"
        say "installed: $dropin (the clock is on a hall: network allowed)"
        changed_units+=("rackside-clock.service")
    fi
elif [ -e "$dropin" ]; then
    rm -f "$dropin"
    say "removed: $dropin (no [hall] in clock.toml: the clock stays off the network)"
    changed_units+=("rackside-clock.service")
fi

# The state directory (systemd's StateDirectory= would make it at first start; the lexicon needs it now).
statedir="$dest/var/lib/rackside"
if [ -z "$dest" ]; then
    install -d -m 0750 -o "$user" -g "$(id -gn "$user")" "$statedir"
    as_user=(runuser -u "$user" --)
else
    mkdir -p "$statedir"
    as_user=()
fi
for r in "${roles[@]+"${roles[@]}"}"; do
    if [ "$r" = kiosk ]; then
        # The station reads its lexicons from the service's state directory, not the user's.
        "${as_user[@]+"${as_user[@]}"}" env RACKSIDE_STATE_DIR="$statedir" "$src/.venv/bin/rackside" lexicon install-default \
            || die "could not compile the default lexicon into $statedir (see above)"
    fi
done

if [ "${#changed_units[@]}" -gt 0 ] && [ "$offline" = 0 ]; then
    "${systemctl[@]}" daemon-reload
    say "reloaded systemd"
fi
for name in clock kiosk broker hall-station; do
    unit="rackside-$name.service"
    wanted=0
    for r in "${roles[@]+"${roles[@]}"}"; do [ "$r" = "$name" ] && wanted=1; done
    if [ "$wanted" = 1 ]; then
        # A running service whose unit changed is restarted (the clock comes back from its journal).
        if [ "$offline" = 1 ]; then
            "${systemctl[@]}" enable --quiet "$unit"
            say "enabled: $unit (systemd is not running here: it starts at the next boot)"
            continue
        fi
        if [ "$no_start" = 1 ]; then
            "${systemctl[@]}" enable "$unit"
            say "enabled: $unit (not started here)"
            continue
        fi
        if [[ " ${changed_units[*]+"${changed_units[*]}"} " == *" $unit "* ]] \
            && "${systemctl[@]}" is-active --quiet "$unit"; then
            "${systemctl[@]}" restart "$unit"
            say "restarted: $unit (its unit changed)"
        fi
        "${systemctl[@]}" enable --now "$unit"
        say "enabled and started: $unit (logs: journalctl -u $unit)"
    else
        say "not enabled: $unit (deploy/install-pi.sh $name enables it)"
    fi
done
# Versions are switched only where a bundle installed them (/opt/rackside/current): there, every
# start of the services first undoes a switch that died (rackside-recover.service, WantedBy= them).
if [ "$repo" = /opt/rackside/current ]; then
    "${systemctl[@]}" enable --quiet rackside-recover.service
    say "enabled: rackside-recover.service (back to the known-good version if a switch died)"
fi
say "done. Config: $confdir/  State: /var/lib/rackside/"
