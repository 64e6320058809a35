#!/usr/bin/env bash
# Removes the Hearth service that deploy/install.sh installed: stops and disables it, removes
# the unit and /opt/hearth. The state (/var/lib/hearth), the settings (/etc/hearth), drop-ins
# (/etc/systemd/system/hearth.service.d) and the user stay unless --purge is given.
set -euo pipefail

usage() {
  cat <<'USAGE'
Usage: sudo deploy/uninstall.sh [options]

  --purge         also delete /var/lib/hearth (every session, memory, tool and upload),
                  /etc/hearth, the unit's drop-ins and the service's user
  --yes           do not ask before --purge deletes
  --user NAME     the service's user (default hearth), removed with --purge
  --root DIR      remove the files under DIR instead of / (also DESTDIR=DIR); implies
                  --no-systemctl; with --purge the user is still the machine's
  --no-systemctl  do not stop, disable or reload (also when systemd is not running)
USAGE
}

service_user='hearth'
purge=''
assume_yes=''
root="${DESTDIR:-}"
use_systemctl='yes'

while (($# > 0)); do
  case "$1" in
    --purge) purge='yes'; shift ;;
    --yes | -y) assume_yes='yes'; shift ;;
    --user) service_user="${2?--user needs a name}"; shift 2 ;;
    --root) root="${2?--root needs a folder}"; shift 2 ;;
    --no-systemctl) use_systemctl=''; shift ;;
    --help | -h) usage; exit 0 ;;
    *) echo "uninstall.sh: unknown option $1" >&2; usage >&2; exit 2 ;;
  esac
done

if [[ -n "$root" ]]; then
  root="$(cd "$root" && pwd -P)"
  use_systemctl=''
fi
[[ -d /run/systemd/system ]] || use_systemctl=''
[[ "$(id -u)" == 0 ]] || { echo "uninstall.sh: run it as root: sudo $0 $*" >&2; exit 1; }

install_dir="$root/opt/hearth"
state_dir="$root/var/lib/hearth"
config_dir="$root/etc/hearth"
unit_file="$root/etc/systemd/system/hearth.service"
drop_ins="$unit_file.d"

if [[ -n "$purge" && -z "$assume_yes" ]]; then
  [[ -t 0 ]] || { echo "uninstall.sh: --purge deletes $state_dir; add --yes to do it without asking" >&2; exit 1; }
  read -r -p "Delete $state_dir (all of Hearth's data) and $config_dir for good? [y/N] " answer
  [[ "$answer" =~ ^[Yy] ]] || { echo "Nothing removed."; exit 1; }
fi

if [[ -n "$use_systemctl" ]]; then
  systemctl disable --now hearth.service 2>/dev/null || true
fi
rm -f "$unit_file"
rm -rf "$install_dir" "$install_dir.new" "$install_dir.old"
echo "removed $unit_file and $install_dir"

if [[ -n "$purge" ]]; then
  rm -rf "$state_dir" "$config_dir" "$drop_ins"
  if getent passwd "$service_user" >/dev/null; then userdel "$service_user"; fi
  echo "removed $state_dir, $config_dir, $drop_ins and the user $service_user"
else
  echo "kept $state_dir, $config_dir, any drop-ins in $drop_ins, and the user $service_user"
  echo "(sudo deploy/uninstall.sh --purge removes them; a later install.sh picks them up again)"
fi
if [[ -n "$use_systemctl" ]]; then systemctl daemon-reload; fi
