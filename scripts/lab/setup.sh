# shellcheck shell=bash
# First-use setup of the soft-RDMA lab, sourced by scripts/rdma-lab.
#
# Everything comes from Debian packages: host tools via apt, the guest kernel
# (Debian's, which has rdma_rxe) via `apt-get download`, siw.ko built out of
# tree from linux-source (Debian's kernel lacks CONFIG_RDMA_SIW), and a small
# busybox initramfs. The cache lives outside the work tree and is keyed by the
# kernel version, so a new Debian kernel gets a fresh build.

LAB_CACHE=${RDMA_LAB_CACHE:-${HOME:-/root}/.cache/rdma-panama/lab}
LAB_SETUP_LOG=$LAB_CACHE/setup.log

# Host packages; linux-headers-<kver> is added once the kernel version is known.
LAB_PKGS=(qemu-system-x86 busybox-static cpio kmod iproute2 rdma-core
    ibverbs-providers ibverbs-utils rdmacm-utils perftest libibverbs-dev
    librdmacm-dev linux-source-6.1 gcc make xz-utils util-linux coreutils python3)

# Modules the initramfs needs before it can mount the host's root; their
# dependencies are resolved from modules.dep.
LAB_INITRD_MODULES=(virtio_pci 9pnet_virtio 9p overlay virtio_console)

LAB_SUDO=()
[[ $EUID -eq 0 ]] || LAB_SUDO=(sudo)
LAB_APT_UPDATED=0
LAB_DID=0   # set when setup had work to do, to report its time

lab_log() { printf 'rdma-lab: %s\n' "$*" >&2; }
lab_die() { lab_log "error: $*"; exit 125; }

# Runs a noisy setup step with its output in setup.log; shows the log's tail on failure.
lab_run() {
    if ! "$@" >>"$LAB_SETUP_LOG" 2>&1; then
        lab_log "failed: $* (last lines of $LAB_SETUP_LOG follow)"
        tail -n 30 "$LAB_SETUP_LOG" >&2
        exit 125
    fi
}

lab_apt_update() {
    ((LAB_APT_UPDATED)) && return 0
    lab_log "apt-get update"
    lab_run "${LAB_SUDO[@]}" apt-get update -q
    LAB_APT_UPDATED=1
}

# Prints the packages of "$@" that are not installed (one dpkg-query for all).
lab_missing_pkgs() {
    local -A ok=()
    local name status
    while read -r name status; do
        [[ $status == installed ]] && ok[${name%%:*}]=1
    done < <(dpkg-query -W -f='${Package} ${db:Status-Status}\n' "$@" 2>/dev/null || true)
    for name; do [[ -n ${ok[$name]:-} ]] || printf '%s\n' "$name"; done
}

lab_install_pkgs() {
    local missing
    mapfile -t missing < <(lab_missing_pkgs "$@")
    ((${#missing[@]})) || return 0
    LAB_DID=1
    lab_log "installing ${missing[*]} (first use, takes a few minutes)"
    lab_apt_update
    lab_run "${LAB_SUDO[@]}" env DEBIAN_FRONTEND=noninteractive \
        apt-get install -y -q --no-install-recommends "${missing[@]}"
}

# Sets LAB_KVER (e.g. 6.1.0-57-amd64) from what linux-image-amd64 depends on.
# apt-cache takes about 0.6 s here (no pkgcache.bin), so the answer is kept
# until apt's lists change.
lab_resolve_kver() {
    local try stamp saved=$LAB_CACHE/kernel-version
    stamp=$(stat -c %Y /var/lib/apt/lists 2>/dev/null || echo none)
    LAB_KVER=
    [[ -f $saved ]] && read -r try LAB_KVER <"$saved" && [[ $try == "$stamp" ]] || LAB_KVER=
    for try in 1 2; do
        [[ -n $LAB_KVER ]] && break
        LAB_KVER=$(apt-cache depends linux-image-amd64 2>/dev/null |
            sed -n 's/^ *Depends: linux-image-\([0-9][^ ]*-amd64\)$/\1/p' | head -n 1)
        if [[ -n $LAB_KVER ]]; then
            stamp=$(stat -c %Y /var/lib/apt/lists 2>/dev/null || echo none)
            printf '%s %s\n' "$stamp" "$LAB_KVER" >"$saved"
        elif ((try == 1 && !LAB_APT_UPDATED)); then
            lab_apt_update # apt lists missing or stale on a fresh machine
        fi
    done
    [[ -n $LAB_KVER ]] || lab_die "cannot tell Debian's kernel version (apt-cache depends linux-image-amd64 is empty)"
    LAB_KDIR=$LAB_CACHE/$LAB_KVER
    LAB_VMLINUZ=$LAB_KDIR/root/boot/vmlinuz-$LAB_KVER
    LAB_MODDIR=$LAB_KDIR/root/lib/modules/$LAB_KVER
    LAB_SIW=$LAB_KDIR/siw/siw.ko
    LAB_VMLINUX=$LAB_KDIR/vmlinux
}

# Unpacks Debian's kernel image into the cache; nothing is installed on the host.
lab_fetch_kernel() {
    [[ -e $LAB_KDIR/root/.done ]] && return 0
    LAB_DID=1
    lab_log "downloading linux-image-$LAB_KVER into $LAB_KDIR"
    local tmp=$LAB_KDIR/root.tmp deb
    rm -rf "$tmp" "$LAB_KDIR/dl"
    mkdir -p "$tmp" "$LAB_KDIR/dl"
    (cd "$LAB_KDIR/dl" && lab_run apt-get download "linux-image-$LAB_KVER") || exit 125
    deb=$(find "$LAB_KDIR/dl" -name "linux-image-${LAB_KVER}_*.deb" | head -n 1)
    [[ -n $deb ]] || lab_die "apt-get download linux-image-$LAB_KVER produced no .deb"
    lab_run dpkg-deb -x "$deb" "$tmp"
    rm -rf "$tmp/usr/share/doc" "$LAB_KDIR/dl"
    lab_run depmod -b "$tmp" "$LAB_KVER"
    touch "$tmp/.done"
    rm -rf "$LAB_KDIR/root"
    mv "$tmp" "$LAB_KDIR/root"
}

# Unpacks the ELF vmlinux from the xz bzImage. qemu boots it through its PVH
# entry point (CONFIG_PVH), which skips SeaBIOS's real-mode loader and the
# decompression: about 2.5 s less per boot under TCG.
lab_extract_vmlinux() {
    [[ -e $LAB_VMLINUX ]] && return 0
    local off
    off=$(LC_ALL=C grep -m 1 -obUaP '\xFD7zXZ\x00' "$LAB_VMLINUZ" | cut -d: -f1) || off=
    off=${off%%$'\n'*}
    # xz stops at the end of its stream, so tail's SIGPIPE is expected.
    if [[ -n $off ]] && { tail -c +$((off + 1)) "$LAB_VMLINUZ" || true; } |
        xz -dc --single-stream >"$LAB_VMLINUX.tmp" 2>/dev/null &&
        [[ $(od -An -tx1 -N4 "$LAB_VMLINUX.tmp" | tr -d ' ') == 7f454c46 ]]; then
        LAB_DID=1
        mv "$LAB_VMLINUX.tmp" "$LAB_VMLINUX"
    else
        rm -f "$LAB_VMLINUX.tmp"
        lab_log "note: no xz vmlinux in $LAB_VMLINUZ; booting the bzImage (slower)"
    fi
}

# The kernel image to boot: the ELF vmlinux when there is one.
lab_kernel_image() {
    if [[ -e $LAB_VMLINUX ]]; then echo "$LAB_VMLINUX"; else echo "$LAB_VMLINUZ"; fi
}

# Builds siw.ko from linux-source against the image's exact headers.
lab_build_siw() {
    [[ -e $LAB_SIW ]] && return 0
    local src=/usr/src/linux-source-6.1.tar.xz hdr=/usr/src/linux-headers-$LAB_KVER
    local tmp=$LAB_KDIR/siw.tmp
    [[ -f $src ]] || lab_die "$src missing (package linux-source-6.1)"
    [[ -d $hdr ]] || lab_die "$hdr missing (package linux-headers-$LAB_KVER)"
    LAB_DID=1
    lab_log "building siw.ko for $LAB_KVER (about a minute)"
    rm -rf "$tmp"
    mkdir -p "$tmp"
    lab_run tar -xJf "$src" -C "$tmp" --strip-components=5 --wildcards '*/drivers/infiniband/sw/siw/*'
    lab_run make -C "$hdr" M="$tmp" CONFIG_RDMA_SIW=m -j"$(nproc)" modules
    [[ -f $tmp/siw.ko ]] || lab_die "siw build produced no siw.ko (see $LAB_SETUP_LOG)"
    rm -rf "$LAB_KDIR/siw"
    mv "$tmp" "$LAB_KDIR/siw"
}

# Prints the relative path of module "$1" and of its dependencies, dependencies
# first (depth-first over LAB_MOD_DEPS, filled from modules.dep).
lab_mod_closure() {
    local dep
    [[ -n ${LAB_MOD_SEEN[$1]:-} ]] && return 0
    LAB_MOD_SEEN[$1]=1
    for dep in ${LAB_MOD_DEPS[$1]}; do lab_mod_closure "$dep"; done
    printf '%s\n' "$1"
}

lab_initrd_modules() {
    declare -gA LAB_MOD_DEPS=() LAB_MOD_SEEN=()
    local -A byname=()
    local path rest name
    while IFS=: read -r path rest; do
        LAB_MOD_DEPS[$path]=$rest
        name=${path##*/}
        byname[${name%%.ko*}]=$path
    done <"$LAB_MODDIR/modules.dep"
    for name in "${LAB_INITRD_MODULES[@]}"; do
        [[ -n ${byname[$name]:-} ]] || lab_die "module $name not in $LAB_KVER"
        lab_mod_closure "${byname[$name]}"
    done
}

# The initramfs: static busybox, /init and the modules to reach the 9p root.
# Named by a hash of its inputs so that editing scripts/lab/init rebuilds it.
lab_build_initrd() {
    local init=$LAB_SCRIPTS/lab/init busybox=/bin/busybox hash mods tmp m
    mapfile -t mods < <(lab_initrd_modules)
    hash=$(cat "$init" "$busybox" <(printf '%s\n' "${mods[@]}") | sha256sum | cut -c1-16)
    LAB_INITRD=$LAB_KDIR/initrd-$hash.cpio
    [[ -e $LAB_INITRD ]] && return 0
    LAB_DID=1
    lab_log "building initramfs $LAB_INITRD"
    tmp=$(mktemp -d "$LAB_KDIR/initrd.XXXXXX")
    mkdir -p "$tmp/bin" "$tmp/lib/modules"
    cp "$busybox" "$tmp/bin/busybox"
    install -m 0755 "$init" "$tmp/init"
    for m in "${mods[@]}"; do
        case $m in
            *.ko) cp "$LAB_MODDIR/$m" "$tmp/lib/modules/" ;;
            *.ko.xz) xz -dc "$LAB_MODDIR/$m" >"$tmp/lib/modules/$(basename "$m" .xz)" ;;
            *) lab_die "unsupported module compression: $m" ;;
        esac
        basename "${m%.xz}" >>"$tmp/modules.order"
    done
    (cd "$tmp" && find . | LC_ALL=C sort | cpio -o -H newc --quiet) >"$LAB_INITRD.tmp"
    mv "$LAB_INITRD.tmp" "$LAB_INITRD"
    rm -rf "$tmp"
    # Older builds are stale; spare recent ones, which a boot starting now may still read.
    find "$LAB_KDIR" -maxdepth 1 -name 'initrd-*.cpio' ! -path "$LAB_INITRD" -mmin +60 -delete
}

# Installs and builds whatever is missing; cheap when the cache is warm.
# flock: two concurrent first uses must not build into the same directories.
lab_setup() {
    local lock_fd t0=$EPOCHREALTIME
    mkdir -p "$LAB_CACHE"
    exec {lock_fd}>"$LAB_CACHE/.lock"
    if ! flock -n "$lock_fd"; then
        lab_log "waiting for another rdma-lab setup to finish"
        flock "$lock_fd"
    fi
    lab_install_pkgs "${LAB_PKGS[@]}"
    lab_resolve_kver
    lab_install_pkgs "linux-headers-$LAB_KVER"
    lab_fetch_kernel
    lab_extract_vmlinux
    lab_build_siw
    lab_build_initrd
    exec {lock_fd}>&-
    if ((LAB_DID)); then
        lab_log "setup done in $(lab_elapsed "$t0") s (cache: $LAB_KDIR)"
    fi
}

# Seconds since $1 (an $EPOCHREALTIME value), one decimal.
lab_elapsed() {
    local now=${EPOCHREALTIME/./} then=${1/./} d
    d=$(((now - then) / 100000))
    printf '%d.%d' $((d / 10)) $((d % 10))
}
