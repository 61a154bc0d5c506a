#!/usr/bin/env bash
# Installs Rackside on a Pi from an unpacked bundle (`rackside bundle`), with no network: this
# file is the bundle's install.sh. Safe to run again. See docs/deploy.md.
#
#   sudo ./install.sh                      install this version beside any other, switch to it, start the clock
#   sudo ./install.sh kiosk                the services to enable, as deploy/install-pi.sh takes them
#   sudo ./install.sh --root DIR           into DIR (an image being prepared, a test root)
#   sudo ./install.sh --wait 1800          wait up to 30 minutes for the game in progress to end
#   sudo ./install.sh --force              switch even while a game is in progress
#
# Options: --root DIR, --user NAME (the services' user; default rackside, made when missing),
# --wait SECONDS, --force, --ready-timeout SECONDS, --no-switch (install only), --help.
#
# In order: checks every file against SHA256SUMS; checks this Pi's Python and machine against
# bundle.json; installs into /opt/rackside/<version>/ (the source and its own venv, made from the
# wheelhouse with pip --no-index --require-hashes, seeing the system's python3-lgpio); installs the
# systemd units, /etc/rackside defaults (deploy/install-pi.sh), the hall join file and its update
# key (/etc/rackside/update-key.pem) when the bundle has one; then `rackside switch`: between games
# only, atomically, tentatively, back to the old version if the new one is not READY=1. Exit: 0
# done, 75 installed but not switched (a game is in progress), 1 failed or rolled back, 2 usage.
#
# For tests: RACKSIDE_SYSTEMCTL=CMD runs CMD instead of systemctl (as deploy/install-pi.sh).
set -euo pipefail

say() { printf 'install.sh: %s\n' "$*"; }
die() { printf 'install.sh: error: %s\n' "$*" >&2; exit 1; }

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root=/
user=rackside
switch_args=()
do_switch=1
roles=()
while [ $# -gt 0 ]; do
    case "$1" in
        --root) [ $# -ge 2 ] || { echo "install.sh: --root needs a folder" >&2; exit 2; }; root="$2"; shift ;;
        --user) [ $# -ge 2 ] || { echo "install.sh: --user needs a name" >&2; exit 2; }; user="$2"; shift ;;
        --wait|--ready-timeout) [ $# -ge 2 ] || { echo "install.sh: $1 needs seconds" >&2; exit 2; }; switch_args+=("$1" "$2"); shift ;;
        --force) switch_args+=(--force) ;;
        --no-switch) do_switch=0 ;;
        -h|--help) sed -n '2,21p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        clock|kiosk|broker|hall-station|none) roles+=("$1") ;;
        *) echo "install.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
    esac
    shift
done
[ "${#roles[@]}" -gt 0 ] || roles=(clock)
[ "$(id -u)" = 0 ] || die "run it as root: sudo $0"
[ -d "$root" ] || die "--root $root: no such folder"
root="$(cd "$root" && pwd)"
prefix="${root%/}"  # "" for /

# --- Intact? -------------------------------------------------------------------------------------
# Before anything else: a bundle cut short on a USB stick or the network must change nothing.
[ -f "$here/SHA256SUMS" ] && [ -f "$here/bundle.json" ] || die "$here is not an unpacked Rackside bundle (no SHA256SUMS or bundle.json)"
(cd "$here" && sha256sum --quiet --strict -c SHA256SUMS) >&2 || die "files in $here do not match SHA256SUMS: copy and unpack the bundle again"
say "every file matches SHA256SUMS"

# --- The Python and machine the wheels are for ---------------------------------------------------
# python3 on the PATH (in a test root, this machine's: such a root has no interpreter of its own).
python="${RACKSIDE_PYTHON:-python3}"
command -v "$python" >/dev/null 2>&1 || die "python3 is not installed (Raspberry Pi OS has it: is this Raspberry Pi OS?)"
# bundle.json, read by Python's json: version, machine, pythons (one a line).
mapfile -t info < <("$python" -c 'import json, sys
b = json.load(open(sys.argv[1]))
print(b["version"]); print(b["machine"]); print(" ".join(b["pythons"]))' "$here/bundle.json") \
    || die "$here/bundle.json cannot be read"
version="${info[0]:-}" machine="${info[1]:-}" pythons="${info[2]:-}"
# The version names a folder and goes into a unit's path: PEP 440 characters only.
[[ "$version" =~ ^[0-9][0-9A-Za-z.+]*$ ]] || die "bundle.json: bad version '$version'"
# The folder's name is the version the console lists and the signature covers (rackside.signing):
# a folder renamed after it was built is not this version (issue 36).
[ "$(basename "$here")" = "rackside-$version" ] \
    || die "$here: its bundle.json says version $version: a bundle renamed after it was built is refused"
pyver="$("$python" -c 'import sys; print("%d.%d" % sys.version_info[:2])')"
arch="$(uname -m)"
if [ "$arch" != "$machine" ]; then
    case "$arch" in armv6l|armv7l) die "this is a 32-bit OS ($arch): the bundle is for 64-bit Raspberry Pi OS only (docs/deploy.md)" ;; esac
    die "this machine is $arch; the bundle's wheels are for $machine"
fi
[[ " $pythons " == *" $pyver "* ]] || die "this Pi's Python is $pyver; the bundle's wheels are for Python ${pythons// /, }"
"$python" -c 'import ensurepip' 2>/dev/null || die "python3's venv module cannot make a venv here (Debian: the python3-venv package)"

# --- /opt/rackside/<version>/ --------------------------------------------------------------------
base="$prefix/opt/rackside"
dir="$base/$version"
if [ -f "$dir/.installed" ]; then
    say "already installed: $dir"
else
    # Made in place (a venv's scripts name their own path), marked complete last: a folder
    # without .installed is a cut-short attempt and is made again.
    rm -rf "$dir"
    mkdir -p "$base"
    cp -a "$here/source" "$dir"
    say "installing rackside $version into $dir"
    # The system's site packages for python3-lgpio, which Raspberry Pi OS ships built for its own
    # kernel and lg library (PyPI has only lgpio's source: no compiler here). Every pinned package
    # is installed into the venv all the same (--ignore-installed), and the venv's come first.
    "$python" -m venv --system-site-packages "$dir/.venv" || die "could not make the venv in $dir/.venv"
    "$dir/.venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-cache-dir --no-index \
        --find-links "$here/wheelhouse" --require-hashes --ignore-installed --only-binary=:all: \
        -r "$here/requirements.lock" || die "pip could not install from the bundle's wheelhouse (see above)"
    rm -f "$dir"/.venv/lib/python3*/site-packages/distutils-precedence.pth  # as setup.sh: issue 11
    # On the card before the mark: a Pi switched off at the wall must not find .installed beside
    # files still in the page cache.
    cp "$here/bundle.json" "$dir/.bundle.json"  # when it was built: `rackside update` tells a downgrade by it
    sync -f "$dir"
    touch "$dir/.installed"
    sync -f "$dir"
fi
"$dir/.venv/bin/rackside" --version >/dev/null || die "$dir/.venv/bin/rackside does not run"

# --- The services' user ---------------------------------------------------------------------------
if [ "$root" = / ] && ! id -u "$user" >/dev/null 2>&1; then
    useradd --system --home-dir /var/lib/rackside --no-create-home --shell /usr/sbin/nologin "$user" \
        || die "could not create the services' user '$user'"
    say "created the system user $user"
fi
if [ "$root" = / ] && [ -e /usr/local/bin ]; then
    ln -sfn /opt/rackside/current/.venv/bin/rackside /usr/local/bin/rackside  # `rackside --version` in a shell
fi

# --- Units, /etc/rackside defaults (deploy/install-pi.sh: one way to do it) ------------------------
export RACKSIDE_REPO=/opt/rackside/current RACKSIDE_USER="$user" RACKSIDE_NO_START=1
[ "$root" = / ] || export RACKSIDE_DESTDIR="$root"
"$dir/deploy/install-pi.sh" "${roles[@]}" || die "could not install the systemd units (see above)"

# --- The hall's join file (hall/device/joinfile.py: the config folder's join.toml) ---------------------------------
if [ -f "$here/join.toml" ]; then
    join="$prefix/etc/rackside/join.toml"
    mkdir -p "$(dirname "$join")"
    if cmp -s "$here/join.toml" "$join"; then
        say "unchanged: $join"
    else
        # It holds the join secret: readable by root and the services' group only.
        group="$(id -gn "$user" 2>/dev/null || echo root)"
        install -m 0640 -o root -g "$group" "$here/join.toml" "$join"
        say "installed: $join (the hall's join file; mode 0640 root:$group)"
    fi
    # Its update_key: from now on this Pi's root updater installs only bundles signed with it
    # (rackside.signing). Root's, and no one else may write it or its folder: the root updater
    # trusts it only so.
    key="$prefix/etc/rackside/update-key.pem"
    "$python" -c 'import sys, tomllib
k = tomllib.load(open(sys.argv[1], "rb")).get("update_key")
sys.stdout.write(k.strip() + "\n" if isinstance(k, str) else "")' "$here/join.toml" >"$key.new" \
        || die "$here/join.toml cannot be read"
    if [ ! -s "$key.new" ]; then
        rm -f "$key.new"
    elif cmp -s "$key.new" "$key"; then
        rm -f "$key.new"
        say "unchanged: $key"
    else
        chown root:root "$key.new" "$(dirname "$key")"
        chmod 0644 "$key.new"
        chmod go-w "$(dirname "$key")"
        mv -f "$key.new" "$key"
        say "installed: $key (the hall's update key: only bundles signed with it are installed from now on)"
    fi
fi

# --- Switch --------------------------------------------------------------------------------------
if [ "$do_switch" = 0 ]; then
    say "installed $version beside $(readlink "$base/current" 2>/dev/null || echo nothing); not switched (--no-switch)"
    exit 0
fi
if [ "$root" != / ] || [ ! -d /run/systemd/system ]; then
    say "systemd is not running in $root: the services are enabled, not started (they start at the next boot)"
fi
status=0
"$dir/.venv/bin/rackside" switch "$version" --root "$root" "${switch_args[@]+"${switch_args[@]}"}" || status=$?
case "$status" in
    0) say "done: rackside $version is current" ;;
    75) say "installed, not switched (a game is in progress): run it again between games" ;;
    *) say "rackside $version is installed but not current (see above)" ;;
esac
exit "$status"
