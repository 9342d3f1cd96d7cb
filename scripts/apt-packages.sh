# Sourced by the set-up scripts: install_apt_packages PKG... installs the Debian packages that
# are missing (with sudo when not root, or it prints the command when sudo is absent).
install_apt_packages() {
    local pkg missing=() sudo=""
    for pkg in "$@"; do
        dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" \
            || missing+=("$pkg")
    done
    ((${#missing[@]})) || return 0
    if [[ $(id -u) -ne 0 ]]; then
        if ! command -v sudo >/dev/null; then
            echo "missing Debian packages; install them with:" >&2
            echo "  apt-get install -y --no-install-recommends ${missing[*]}" >&2
            return 1
        fi
        sudo="sudo"
    fi
    echo "installing Debian packages: ${missing[*]}"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends \
        "${missing[@]}" >/dev/null
}
