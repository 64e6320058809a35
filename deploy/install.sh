#!/usr/bin/env bash
# Installs Hearth as a systemd service, or upgrades an installed one in place.
#
#   sudo deploy/install.sh [--groups systemd-journal,adm,docker] [--yes]
#
# First run: checks Node.js, installs bubblewrap and passt when absent, creates the system user
# `hearth`, copies this checkout to /opt/hearth and runs `npm ci` there (which builds dist/),
# creates /var/lib/hearth (the state) and /etc/hearth/hearth.env (settings, mode 0600), writes
# /etc/systemd/system/hearth.service with this machine's node, sets the user's groups, enables
# and starts the service. Run again, it upgrades: new code, `npm ci`, restart; /var/lib/hearth
# and hearth.env are left as they are. docs/operations.md explains each step and the unit.
set -euo pipefail
umask 022

usage() {
  cat <<'USAGE'
Usage: sudo deploy/install.sh [options]

  --groups LIST   supplementary groups for the service's user, comma-separated, from
                  systemd-journal (read the journal), adm (read /var/log and the journal),
                  docker (use docker: as good as root); "" for none. Asked when omitted on a
                  first install; an upgrade keeps the groups the user has.
  --yes           ask nothing (a first install without --groups gets no groups)
  --user NAME     the service's user (default hearth)
  --from DIR      the checkout to install (default: the one this script is in)
  --root DIR      write every file under DIR instead of / (also DESTDIR=DIR); implies
                  --no-systemctl. The user, its groups and apt packages are the machine's.
  --no-systemctl  write everything, but do not reload, enable or restart the service
                  (also when systemd is not running)
  --skip-npm-ci   for tests: hard-link node_modules/ from --from (which has run `npm ci`)
                  instead of running `npm ci` in the copy, then build dist/ as npm ci does
USAGE
}

minimum_node='20.19.0'
service_user='hearth'
groups_given=''
groups_wanted=''
assume_yes=''
root="${DESTDIR:-}"
source_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)"
use_systemctl='yes'
skip_npm_ci=''

while (($# > 0)); do
  case "$1" in
    --groups) groups_given='yes'; groups_wanted="${2?--groups needs a list}"; shift 2 ;;
    --groups=*) groups_given='yes'; groups_wanted="${1#--groups=}"; shift ;;
    --yes | -y) assume_yes='yes'; shift ;;
    --user) service_user="${2?--user needs a name}"; shift 2 ;;
    --from) source_dir="$(cd "${2?--from needs a folder}" && pwd -P)"; shift 2 ;;
    --root) root="${2?--root needs a folder}"; shift 2 ;;
    --no-systemctl) use_systemctl=''; shift ;;
    --skip-npm-ci) skip_npm_ci='yes'; shift ;;
    --help | -h) usage; exit 0 ;;
    *) echo "install.sh: unknown option $1" >&2; usage >&2; exit 2 ;;
  esac
done

# The paths the service uses; with --root they are written under it, and the unit still names these.
install_dir='/opt/hearth'
state_dir='/var/lib/hearth'
config_dir='/etc/hearth'
unit_file='/etc/systemd/system/hearth.service'
if [[ -n "$root" ]]; then
  mkdir -p "$root"
  root="$(cd "$root" && pwd -P)"
  use_systemctl=''
fi
if [[ -n "$use_systemctl" && ! -d /run/systemd/system ]]; then
  echo "systemd is not running on this machine: the service is written but not started."
  use_systemctl=''
fi

say() { printf '\n== %s\n' "$*"; }
fail() { printf 'install.sh: %s\n' "$*" >&2; exit 1; }

[[ "$(id -u)" == 0 ]] || fail "run it as root: sudo $0 $*"
[[ "$service_user" =~ ^[a-z_][a-z0-9_-]*$ ]] || fail "--user $service_user is not a valid user name"

node_instructions() {
  cat >&2 <<'NODE'
Hearth needs Node.js 20.19 or newer, installed for the whole system (not under /home or /root,
which the service cannot see). Debian 12 and Ubuntu 22.04/24.04 ship an older one; get it from
NodeSource (Node 22, with npm):

  curl -fsSL https://deb.nodesource.com/setup_22.x -o /tmp/nodesource_setup.sh
  sudo bash /tmp/nodesource_setup.sh
  sudo apt-get install -y nodejs

Debian 13 and newer: sudo apt install nodejs npm
With nvm, install it outside every home folder, e.g. as root:
  export NVM_DIR=/usr/local/nvm; (curl -fsSL https://raw.githubusercontent.com/nvm-sh/nvm/v0.40.3/install.sh | bash)
  . /usr/local/nvm/nvm.sh && nvm install 22
and run this script again with that node first in PATH.
NODE
}

version_at_least() {
  [[ "$(printf '%s\n%s\n' "$2" "$1" | sort -V | head -n 1)" == "$2" ]]
}

say "Node.js"
node_path="$(command -v node || true)"
if [[ -z "$node_path" ]]; then
  echo "node is not installed." >&2
  node_instructions
  exit 1
fi
node_path="$(readlink -f "$node_path")"
node_version="$("$node_path" -p 'process.versions.node')"
if ! version_at_least "$node_version" "$minimum_node"; then
  echo "$node_path is Node.js $node_version, older than $minimum_node." >&2
  node_instructions
  exit 1
fi
case "$node_path" in
  /home/* | /root/* | /run/user/* | /tmp/* | /var/tmp/*)
    echo "$node_path is in a folder the service does not see (ProtectHome=, PrivateTmp=)." >&2
    node_instructions
    exit 1 ;;
esac
if [[ -z "$skip_npm_ci" ]] && ! command -v npm >/dev/null; then
  fail "npm is not installed next to $node_path (NodeSource's nodejs includes it; Debian's is: sudo apt install npm)"
fi
echo "$node_path, Node.js $node_version"

say "bubblewrap and passt (the jail)"
if command -v bwrap >/dev/null && command -v pasta >/dev/null; then
  echo "installed: $(command -v bwrap), $(command -v pasta)"
elif command -v apt-get >/dev/null; then
  DEBIAN_FRONTEND=noninteractive apt-get install -y bubblewrap passt
else
  fail "install bubblewrap and passt (pasta) with this system's package manager, then run this again"
fi

say "user $service_user"
if getent passwd "$service_user" >/dev/null; then
  upgrade_user='yes'
  echo "exists: $(id "$service_user")"
else
  upgrade_user=''
  useradd --system --user-group --home-dir "$state_dir" --shell /usr/sbin/nologin "$service_user"
  echo "created: $(id "$service_user")"
fi

say "folders"
# Created when missing, never changed when present: an upgrade leaves the state and settings alone.
make_folder() {
  local folder="$1" owner="$2" mode="$3"
  if [[ -d "$root$folder" ]]; then
    echo "kept     $root$folder"
  else
    install -d -o "${owner%:*}" -g "${owner#*:}" -m "$mode" "$root$folder"
    echo "created  $root$folder ($owner, $mode)"
  fi
}
mkdir -p "$root$(dirname "$install_dir")" "$root$(dirname "$unit_file")"
make_folder "$state_dir" "$service_user:$service_user" 0750
make_folder "$config_dir" "root:$service_user" 0750
environment_file="$root$config_dir/hearth.env"
if [[ -e "$environment_file" ]]; then
  echo "kept     $environment_file"
else
  (
    umask 077
    cat >"$environment_file" <<'SETTINGS'
# Hearth's settings under systemd: only what differs from the defaults (docs/configuration.md).
# Read by systemd as root, so this file stays mode 0600. Do not set DATA_DIR here.
#OLLAMA_HOST=http://127.0.0.1:11434
#HOST=0.0.0.0
#PORT=8000
#AUTH_TOKEN=a-long-random-string
SETTINGS
  )
  echo "created  $environment_file (root, 0600)"
fi

say "code in $root$install_dir"
copy_checkout() {
  local destination="$1"
  mkdir -p "$destination"
  if git -c safe.directory="$source_dir" -C "$source_dir" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    # What git tracks or would track (no node_modules, dist, .env or local state), as the files are
    # now; a tracked file deleted in the working tree is left out.
    git -c safe.directory="$source_dir" -C "$source_dir" ls-files -z --cached --others --exclude-standard |
      while IFS= read -r -d '' file; do
        if [[ -e "$source_dir/$file" || -L "$source_dir/$file" ]]; then printf '%s\0' "$file"; fi
      done |
      tar --create --file=- --directory="$source_dir" --null --no-recursion --files-from=- |
      tar --extract --no-same-owner --file=- --directory="$destination"
  else
    tar --create --file=- --directory="$source_dir" --exclude=./node_modules --exclude=./dist --exclude=./.git \
      --exclude=./.env --exclude=./data --exclude=./mcp.json --exclude=./ssh_hosts.json . |
      tar --extract --no-same-owner --file=- --directory="$destination"
  fi
}
install_dependencies() {
  local destination="$1"
  if [[ -n "$skip_npm_ci" ]]; then
    [[ -d "$source_dir/node_modules" ]] || fail "--skip-npm-ci needs node_modules/ in $source_dir (npm ci there first)"
    mkdir "$destination/node_modules"
    # Hard links (a copy across file systems); .cache holds the source checkout's test builds.
    for entry in "$source_dir"/node_modules/* "$source_dir"/node_modules/.[!.]*; do
      [[ -e "$entry" && "$(basename "$entry")" != .cache ]] || continue
      cp -al "$entry" "$destination/node_modules/" 2>/dev/null || cp -a "$entry" "$destination/node_modules/"
    done
    echo "linked node_modules/ from $source_dir (npm ci skipped); building dist/ as npm ci's prepare does"
    (cd "$destination" && npm run --silent build)
  else
    # --omit=dev: the build (esbuild, through `prepare`) needs only the dependencies.
    (cd "$destination" && npm ci --omit=dev --no-audit --no-fund)
  fi
}
same_folder() { [[ -d "$2" && "$(cd "$1" && pwd -P)" == "$(cd "$2" && pwd -P)" ]]; }
if same_folder "$source_dir" "$root$install_dir"; then
  # The person cloned into /opt/hearth and pulled: build it where it is.
  echo "installing the checkout in place"
  if [[ -n "$skip_npm_ci" ]]; then
    (cd "$source_dir" && npm run --silent build)
  else
    (cd "$source_dir" && npm ci --omit=dev --no-audit --no-fund)
  fi
  previous_code=''
else
  # Built beside the running one, then swapped in: the service keeps running during npm ci,
  # and files deleted upstream do not linger.
  staging="$root$install_dir.new"
  rm -rf "$staging"
  copy_checkout "$staging"
  install_dependencies "$staging"
  previous_code=''
  if [[ -e "$root$install_dir" ]]; then
    previous_code="$root$install_dir.old"
    rm -rf "$previous_code"
    mv "$root$install_dir" "$previous_code"
  fi
  mv "$staging" "$root$install_dir"
  echo "installed $source_dir as $root$install_dir"
fi
[[ -f "$root$install_dir/dist/main.js" ]] || fail "$root$install_dir/dist/main.js is missing: npm ci did not build it"

say "unit $root$unit_file"
unit_template="$root$install_dir/deploy/hearth.service"
sed -e "s|^ExecStart=/usr/bin/node |ExecStart=$node_path |" \
  -e "s|^User=hearth\$|User=$service_user|" \
  -e "s|^Group=hearth\$|Group=$service_user|" \
  "$unit_template" >"$root$unit_file.new"
grep -q "^ExecStart=$node_path " "$root$unit_file.new" || fail "$unit_template has no 'ExecStart=/usr/bin/node ' line to point at $node_path"
chmod 0644 "$root$unit_file.new"
mv "$root$unit_file.new" "$root$unit_file"
echo "ExecStart runs $node_path as $service_user"

say "groups of $service_user"
explain_groups() {
  cat <<'GROUPS'
server_admin's terminal runs as this user. A group gives it what the user alone cannot read:
  systemd-journal  the whole system journal (journalctl -u <any unit>)
  adm              the files in /var/log (syslog, auth.log, ...) and, on Debian, the journal
  docker           the docker socket: docker ps, logs, and also docker run -v /:/host, which is
                   as good as root on this machine (approvals still ask before such commands)
GROUPS
}
if [[ -z "$groups_given" && -n "$upgrade_user" ]]; then
  groups_wanted="$(id -nG "$service_user" | tr ' ' '\n' | grep -vx "$service_user" | paste -sd, - || true)"
  echo "kept: ${groups_wanted:-none} (--groups changes them)"
elif [[ -z "$groups_given" && -z "$assume_yes" && -t 0 ]]; then
  explain_groups
  groups_wanted=''
  for group in systemd-journal adm docker; do
    getent group "$group" >/dev/null || continue
    read -r -p "Add $service_user to $group? [y/N] " answer
    [[ "$answer" =~ ^[Yy] ]] && groups_wanted="${groups_wanted:+$groups_wanted,}$group"
  done
fi
if [[ -n "$groups_given" || -z "$upgrade_user" ]]; then
  existing=''
  IFS=',' read -r -a requested <<<"$groups_wanted"
  for group in "${requested[@]}"; do
    [[ -z "$group" ]] && continue
    if getent group "$group" >/dev/null; then
      existing="${existing:+$existing,}$group"
    else
      echo "no group $group on this machine: skipped"
    fi
  done
  usermod -G "$existing" "$service_user"
  echo "set: ${existing:-none}"
fi

say "service"
if [[ -n "$use_systemctl" ]]; then
  systemctl daemon-reload
  systemctl enable hearth.service
  systemctl restart hearth.service
  systemctl --no-pager --lines=0 status hearth.service || true
else
  echo "not started here; on the machine: systemctl daemon-reload && systemctl enable --now hearth"
fi
[[ -n "$previous_code" ]] && rm -rf "$previous_code"

setting() {
  sed -n "s/^$1=//p" "$environment_file" | tail -n 1 | tr -d "\"'"
}
host="$(setting HOST)"
port="$(setting PORT)"
scheme='http'
[[ -n "$(setting TLS_CERT_FILE)" ]] && scheme='https'
case "${host:-127.0.0.1}" in
  0.0.0.0 | '::') shown_host="$(hostname -I 2>/dev/null | cut -d' ' -f1)" ;;
  *) shown_host="${host:-127.0.0.1}" ;;
esac
say "done"
cat <<DONE
Hearth:    $scheme://${shown_host:-127.0.0.1}:${port:-8000}
Settings:  $config_dir/hearth.env (then: sudo systemctl restart hearth)
State:     $state_dir
Its log:   journalctl -u hearth -f
Upgrade:   git pull in $source_dir, then sudo $source_dir/deploy/install.sh
DONE
