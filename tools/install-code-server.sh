#!/usr/bin/env bash
# Install code-server (a real VS Code served to a browser) into a cache folder under the repo,
# for the VS Code end-to-end test (tests/test_vscode_e2e.py) and for manual trials.
#
# Usage: tools/install-code-server.sh [PREFIX]
#   PREFIX defaults to <repo>/.cache/code-server; the binary ends up at
#   PREFIX/node_modules/.bin/code-server and its path is printed on the last line of stdout.
#
# code-server 4.100.3 (VS Code 1.100.3) is the newest release that runs on Node 20.
# Idempotent: a second run with the right version already installed returns in well under a second.
set -euo pipefail

readonly VERSION="4.100.3"
readonly RIPGREP_CACHE_NAME="vscode-ripgrep-cache-1.15.11"
readonly RIPGREP_VERSION="v13.0.0-10"

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
prefix="${1:-${repo_root}/.cache/code-server}"
bin="${prefix}/node_modules/.bin/code-server"
pkg_json="${prefix}/node_modules/code-server/package.json"

log() { printf 'install-code-server: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

installed_version() {
  [[ -x "${bin}" && -f "${pkg_json}" ]] || return 1
  node -e 'process.stdout.write(require(process.argv[1]).version)' "${pkg_json}" 2>/dev/null
}

if [[ "$(installed_version || true)" == "${VERSION}" ]]; then
  log "code-server ${VERSION} already installed in ${prefix}"
  printf '%s\n' "${bin}"
  exit 0
fi

# One installer at a time per prefix (e.g. two test runs starting together).
mkdir -p "${prefix}"
exec 9>"${prefix}/.install.lock"
if command -v flock >/dev/null; then
  flock 9
  if [[ "$(installed_version || true)" == "${VERSION}" ]]; then
    log "code-server ${VERSION} installed in ${prefix} by another run"
    printf '%s\n' "${bin}"
    exit 0
  fi
fi

command -v node >/dev/null || die "node is required (Node 20)"
command -v npm >/dev/null || die "npm is required"
node_major="$(node -p 'process.versions.node.split(".")[0]')"
[[ "${node_major}" -ge 20 ]] || die "Node >= 20 is required, found $(node --version)"

# System packages: kerberos (a code-server dependency) builds from source and needs libkrb5-dev
# and pkg-config; ripgrep replaces @vscode/ripgrep's download from GitHub (see below).
missing=()
dpkg -s libkrb5-dev >/dev/null 2>&1 || missing+=(libkrb5-dev)
command -v pkg-config >/dev/null || missing+=(pkg-config)
command -v rg >/dev/null || missing+=(ripgrep)
if [[ ${#missing[@]} -gt 0 ]]; then
  command -v apt-get >/dev/null || die "missing ${missing[*]} and apt-get is not available"
  sudo_cmd=()
  if [[ "$(id -u)" -ne 0 ]]; then
    command -v sudo >/dev/null || die "missing ${missing[*]}; run as root or install them"
    sudo_cmd=(sudo)
  fi
  log "installing ${missing[*]} with apt-get"
  "${sudo_cmd[@]}" apt-get update -qq
  "${sudo_cmd[@]}" env DEBIAN_FRONTEND=noninteractive \
    apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# @vscode/ripgrep's postinstall downloads a ripgrep build from GitHub unless this tarball is in
# its cache under os.tmpdir(); seed it with the system rg so no download is needed.
case "$(uname -m)" in
  x86_64) rg_target="x86_64-unknown-linux-musl" ;;
  aarch64 | arm64) rg_target="aarch64-unknown-linux-musl" ;;
  *) die "unsupported machine $(uname -m): only x86_64 and aarch64 Linux are handled" ;;
esac
rg_tarball="ripgrep-${RIPGREP_VERSION}-${rg_target}.tar.gz"
tmpdir="$(node -e 'process.stdout.write(require("os").tmpdir())')"
rg_cache="${tmpdir}/${RIPGREP_CACHE_NAME}"
if [[ ! -s "${rg_cache}/${rg_tarball}" ]]; then
  log "seeding the ripgrep cache in ${rg_cache} from $(command -v rg)"
  mkdir -p "${rg_cache}"
  staging="$(mktemp -d)"
  cp "$(command -v rg)" "${staging}/rg"
  tar -czf "${rg_cache}/${rg_tarball}.partial" -C "${staging}" rg
  mv "${rg_cache}/${rg_tarball}.partial" "${rg_cache}/${rg_tarball}"
  rm -rf "${staging}"
fi

log "installing code-server ${VERSION} into ${prefix} (takes a few minutes)"
# As root, code-server's postinstall refuses to run unless unsafe-perm is set; node-pty's
# postinstall runs `npx node-gyp`, which must not prompt.
export npm_config_unsafe_perm=true
export npm_config_yes=true
npm install --prefix "${prefix}" --no-audit --no-fund "code-server@${VERSION}" >&2

[[ "$(installed_version || true)" == "${VERSION}" ]] \
  || die "code-server ${VERSION} is not at ${bin} after npm install"
# code-server writes a default config.yaml under XDG_CONFIG_HOME even for --version: keep it out
# of $HOME.
scratch="$(mktemp -d)"
trap 'rm -rf "${scratch}"' EXIT
XDG_CONFIG_HOME="${scratch}" XDG_DATA_HOME="${scratch}" "${bin}" --version >&2 \
  || die "${bin} --version failed"
log "code-server ${VERSION} installed"
printf '%s\n' "${bin}"
