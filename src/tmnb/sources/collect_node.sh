#!/bin/sh
# tmnb node collector: read-only, POSIX sh, no Python needed on the node.
#
# Copies the files the Topology Manager inventory needs under their node paths and adds command
# outputs under tmnb/, then writes one gzip tar to stdout (base64 between marker lines with -b).
# It never reads credentials: PKI directories, kubeconfigs, keys, tokens, secret volumes and
# process environments are refused even when asked for (-p, --config, --config-dir).
#
# usage: collect_node.sh [-r ROOT] [-c] [-s SINCE] [-m MAX_BYTES] [-j LINES] [-J BYTES] [-b] [-p PATH]...
#   -r ROOT   read the node's files under ROOT (a copy of a node, or /host in a node pod)
#   -c        run host tools (lscpu, journalctl, crictl) chrooted into ROOT
#   -s SINCE  kubelet journal since this time (journalctl --since syntax; default -24h)
#   -m BYTES  bundle size cap (default 8 MiB); optional outputs are dropped first, then it fails
#   -j LINES  at most this many journal lines, the newest (default 5000)
#   -J BYTES  at most this many bytes of journal, the newest whole lines (default 256 KiB)
#   -b        base64 between "--- tmnb bundle begin/end ---" lines (for pod logs)
#   -p PATH   also copy this file
set -u
ROOT="" SINCE="-24h" MAX=8388608 LINES=5000 JMAX=262144 CHROOT=0 B64=0 EXTRA=""
USAGE="usage: collect_node.sh [-r ROOT] [-c] [-s SINCE] [-m MAX_BYTES] [-j LINES] [-J BYTES] [-b] [-p PATH]..."
while getopts r:cs:m:j:J:bp: opt; do
	case $opt in
	r) ROOT=${OPTARG%/} ;;
	c) CHROOT=1 ;;
	s) SINCE=$OPTARG ;;
	m) MAX=$OPTARG ;;
	j) LINES=$OPTARG ;;
	J) JMAX=$OPTARG ;;
	b) B64=1 ;;
	p) EXTRA="$EXTRA $OPTARG" ;;
	*) echo "$USAGE" >&2; exit 2 ;;
	esac
done
case $MAX$LINES$JMAX in *[!0-9]*) echo "collect_node.sh: -m, -j and -J take numbers" >&2; exit 2 ;; esac
export LC_ALL=C
umask 077
WORK=$(mktemp -d "${TMPDIR:-/tmp}/tmnb-node.XXXXXX") || { echo "collect_node.sh: no temporary directory" >&2; exit 1; }
trap 'rm -rf "$WORK"' EXIT
trap 'exit 1' INT TERM
OUT=$WORK/bundle
mkdir -p "$OUT/tmnb"
ERRORS=$OUT/tmnb/errors.txt
: >"$ERRORS"
KROOT=/var/lib/kubelet

note() { printf '%s\t%s\n' "$1" "$2" >>"$ERRORS"; }

# 0 when a node path must never be read.
denied() {
	case $1 in
	/etc/kubernetes/*/*) ;;
	/etc/kubernetes/*.conf) return 0 ;; # admin.conf, kubelet.conf, bootstrap-kubelet.conf: kubeconfigs
	esac
	case $1 in
	*/pki | */pki/* | *kubeconfig* | */environ | *.key | *.pem | *.crt | *.p12 | *token* | *secret* | \
		*/var/lib/kubelet/pods/* | *kubernetes.io~* | */.ssh/* | */shadow | *..*) return 0 ;;
	esac
	return 1
}

# allowed NODE_PATH [required]: 0 when $ROOT$NODE_PATH is a file that may be read (not a credential,
# not a link out of the root or to a credential); otherwise the reason goes to errors.txt.
allowed() {
	src=$ROOT$1
	if denied "$1"; then
		note "$1" "refused: credentials are never read"
		return 1
	fi
	if [ ! -f "$src" ]; then
		[ -n "${2:-}" ] && note "$1" "missing"
		return 1
	fi
	if [ -h "$src" ] && command -v readlink >/dev/null 2>&1; then
		real=$(readlink -f "$src") && rroot=$(readlink -f "${ROOT:-/}") || real=/..
		[ "$rroot" = / ] && rroot=""
		case $real in "$rroot"/*) real=${real#"$rroot"} ;; *) real=/.. ;; esac
		if [ "$real" = /.. ]; then
			note "$1" "refused: a link out of the node root"
			return 1
		elif denied "$real"; then
			note "$1" "refused: links to $real"
			return 1
		fi
	fi
	return 0
}

# copy NODE_PATH [required]: $ROOT$NODE_PATH to $OUT$NODE_PATH, refusing credentials and symlinks out of them.
copy() {
	allowed "$@" || return 1
	size=$(wc -c <"$src" 2>/dev/null) || size=0
	if [ "$size" -gt "$MAX" ]; then
		note "$1" "skipped: $size bytes is over the bundle cap"
		return 1
	fi
	mkdir -p "$OUT${1%/*}" && cat "$src" >"$OUT$1" 2>/dev/null || { note "$1" "unreadable"; rm -f "$OUT$1"; return 1; }
}

# copy_sys PATTERN...: every existing match of sysfs attributes (full paths). An attribute is a
# page of text at most, so copy's size check is left out, and the batch costs one mkdir and one awk
# instead of three processes per file (thousands of CPU files on a large node). A name xargs would
# split goes through copy; so does the whole batch when awk fails, to name the file it could not read.
copy_sys() {
	: >"$WORK/sys.files"
	: >"$WORK/sys.dirs"
	for f in "$@"; do
		[ -e "$f" ] || continue
		p=${f#"$ROOT"}
		case $p in
		*[[:space:]\'\"\\]*) copy "$p" ;;
		*) allowed "$p" && printf '%s\n' "${p#/}" >>"$WORK/sys.files" && printf '.%s\n' "${p%/*}" >>"$WORK/sys.dirs" ;;
		esac
	done
	[ -s "$WORK/sys.files" ] || return 0
	sort -u "$WORK/sys.dirs" | (cd "$OUT" && xargs mkdir -p) &&
		(cd "${ROOT:-/}" && xargs awk -v out="$OUT/" 'FNR == 1 { close(dst); dst = out FILENAME } { print > dst }' \
			<"$WORK/sys.files") 2>/dev/null && return 0
	while IFS= read -r p; do copy "/$p"; done <"$WORK/sys.files"
}

tool() { if [ "$CHROOT" = 1 ]; then chroot "${ROOT:-/}" "$@"; else "$@"; fi; }
has() {
	if [ "$CHROOT" = 1 ]; then
		chroot "${ROOT:-/}" /bin/sh -c "command -v $1" >/dev/null 2>&1
	else
		command -v "$1" >/dev/null 2>&1
	fi
}
live() { [ "$CHROOT" = 1 ] || [ -z "$ROOT" ]; }

# Distinct values of flag $1 in whitespace/quote/=-separated words on stdin ("--f v", "--f=v").
flag_values() { tr -s ' \t"\047=' '\n\n\n\n\n' | awk -v f="--$1" '$0 == f && (getline v) > 0 && !seen[v]++ { print v }'; }

# --- NUMA and CPU topology (sysfs) ---------------------------------------------------------
S=$ROOT/sys/devices/system
copy_sys "$S"/node/online "$S"/node/possible "$S"/node/has_cpu "$S"/node/has_memory
copy_sys "$S"/node/node*/cpulist "$S"/node/node*/meminfo "$S"/node/node*/distance
copy_sys "$S"/node/node*/hugepages/hugepages-*/nr_hugepages "$S"/node/node*/hugepages/hugepages-*/free_hugepages \
	"$S"/node/node*/hugepages/hugepages-*/surplus_hugepages
copy_sys "$S"/cpu/online "$S"/cpu/possible
copy_sys "$S"/cpu/cpu*/topology/physical_package_id "$S"/cpu/cpu*/topology/core_id \
	"$S"/cpu/cpu*/topology/thread_siblings_list
copy_sys "$ROOT"/sys/bus/pci/devices/*/numa_node
[ -d "$S/node" ] || note /sys/devices/system/node "missing: no NUMA information in sysfs"

# --- the kubelet: running command line, systemd unit, config file, drop-ins -----------------
KPID=$(grep -l -x kubelet "$ROOT"/proc/[0-9]*/comm 2>/dev/null | head -n 1)
KPID=${KPID%/comm}
KPID=${KPID##*/}
WORDS=$WORK/words
: >"$WORDS"
if [ -n "$KPID" ] && [ -r "$ROOT/proc/$KPID/cmdline" ]; then
	cat "$ROOT/proc/$KPID/cmdline" >"$OUT/tmnb/kubelet.cmdline"
	tr '\0' '\n' <"$OUT/tmnb/kubelet.cmdline" >>"$WORDS"
else
	note /proc "no running kubelet process found"
fi
# A unit file or EnvironmentFile that is there but cannot be copied hides flags: say so as the
# kubelet unit's problem (an absent optional EnvironmentFile is not one).
unit_note() { note "kubelet unit" "unreadable: $1, $2 of the kubelet unit: the flags it sets are unknown"; }
for d in /etc/systemd/system /run/systemd/system /usr/lib/systemd/system /lib/systemd/system; do
	for f in "$ROOT$d"/kubelet.service "$ROOT$d"/kubelet.service.d/*.conf; do
		[ -e "$f" ] || [ -h "$f" ] || continue
		copy "${f#"$ROOT"}" || { unit_note "${f#"$ROOT"}" "a file"; continue; }
		cat "$f" >>"$WORDS"
		sed -n 's/^[[:space:]]*EnvironmentFile[[:space:]]*=[[:space:]]*-\{0,1\}//p' "$f" >>"$WORK/envfiles"
	done
done
if [ -f "$WORK/envfiles" ]; then
	while IFS= read -r env; do
		if copy "$env"; then
			cat "$OUT$env" >>"$WORDS"
		elif [ -e "$ROOT$env" ] || [ -h "$ROOT$env" ]; then
			unit_note "$env" "an EnvironmentFile="
		fi
	done <"$WORK/envfiles"
fi
configs=$(flag_values config <"$WORDS")
for c in $configs; do [ "$c" = $KROOT/config.yaml ] || copy "$c"; done
copy $KROOT/config.yaml
for dir in $(flag_values config-dir <"$WORDS"); do
	if denied "$dir/"; then
		note "$dir" "refused: credentials are never read"
		continue
	fi
	find "$ROOT$dir" \( -type f -o -type l \) -name '*.conf' 2>/dev/null | sort >"$WORK/dropins"
	while IFS= read -r f; do copy "${f#"$ROOT"}"; done <"$WORK/dropins"
done
for r in $KROOT $(flag_values root-dir <"$WORDS" | grep -v -x "$KROOT"); do
	copy "$r/cpu_manager_state"
	copy "$r/memory_manager_state"
	copy "$r/device-plugins/kubelet_internal_checkpoint"
done
for p in $EXTRA; do copy "$p" required; done

# --- container cpusets: cgroup v2, then v1 -------------------------------------------------
CG=$ROOT/sys/fs/cgroup
if [ -f "$CG/cgroup.controllers" ]; then
	find "$CG" -path '*kubepods*' -name cpuset.cpus.effective -exec grep -H '' {} + 2>/dev/null |
		sed "s#^$CG##" >"$OUT/tmnb/cpusets-v2.txt"
elif [ -d "$CG/cpuset" ]; then
	find "$CG/cpuset" -path '*kubepods*' -name cpuset.effective_cpus -exec grep -H '' {} + 2>/dev/null |
		sed "s#^$CG/cpuset##" >"$OUT/tmnb/cpusets-v1.txt"
else
	note /sys/fs/cgroup "no cgroup v2 or v1 cpuset hierarchy"
fi

# --- command outputs -------------------------------------------------------------------------
if has lscpu; then
	sysroot=""
	live || sysroot="--sysroot=$ROOT"
	tool lscpu $sysroot >"$OUT/tmnb/lscpu.txt" 2>>"$WORK/stderr" &&
		tool lscpu $sysroot -J >"$OUT/tmnb/lscpu.json" 2>>"$WORK/stderr" &&
		tool lscpu $sysroot -a --parse=CPU,CORE,SOCKET,NODE,ONLINE >"$OUT/tmnb/lscpu-p.csv" 2>>"$WORK/stderr" ||
		{ note lscpu "failed: $(tail -n 1 "$WORK/stderr" 2>/dev/null)"; rm -f "$OUT"/tmnb/lscpu*; }
else
	note lscpu "not installed"
fi
# --- the kubelet journal: lines about the resource managers, admission, start-up and stop ---
# From journald (live, or a copied /var/log/journal), else a text log: /journal.log at the top of a
# copied root (journalctl -u kubelet -o short-iso saved beside the files; the sandbox writes one) or
# /var/log/kubelet.log (nodes without journald). Bounded by -s (journald; the reader applies it to
# text logs), -j and -J; journal_truncated=1 in meta.txt when older lines were cut.
JPAT='topology|cpu_?manager|memory_?manager|device_?manager|policy_static|numa|SMTAlignment|AdmissionError|admission|checkpoint|ContainerManager|command failed|failed to validate|invalid configuration|Kubelet version|Started kubelet|Stopped kubelet|kubelet\.service: Main process exited'
JSRC="" JFILES="" JTRUNC=0
if live; then
	if has journalctl; then JSRC="journalctl -u kubelet"; else JFILES=/var/log/kubelet.log; fi
elif [ -d "$ROOT/var/log/journal" ] && has journalctl; then
	JSRC="journalctl -D /var/log/journal -u kubelet"
else
	JFILES="/journal.log /var/log/kubelet.log"
fi
for f in $JFILES; do
	if [ -f "$ROOT$f" ]; then
		allowed "$f" && JSRC=$f
		break
	fi
done
case $JSRC in
"") note journal "none found (journalctl${JFILES:+, $JFILES})" ;;
"journalctl -u kubelet")
	tool journalctl -u kubelet --since "$SINCE" --no-pager -o short-iso 2>>"$WORK/stderr" | grep -i -E "$JPAT" >"$WORK/journal.all" ;;
journalctl*)
	journalctl -D "$ROOT/var/log/journal" -u kubelet --since "$SINCE" --no-pager -o short-iso 2>>"$WORK/stderr" |
		grep -i -E "$JPAT" >"$WORK/journal.all" ;;
*) grep -i -E "$JPAT" "$ROOT$JSRC" >"$WORK/journal.all" ;;
esac
if [ -n "$JSRC" ]; then
	[ "$(wc -l <"$WORK/journal.all")" -gt "$LINES" ] && JTRUNC=1
	tail -n "$LINES" "$WORK/journal.all" >"$WORK/journal.lines"
	if [ "$(wc -c <"$WORK/journal.lines")" -gt "$JMAX" ]; then
		JTRUNC=1
		tail -c "$JMAX" "$WORK/journal.lines" | sed 1d >"$OUT/tmnb/journal.txt" # the first line is cut
	else
		cat "$WORK/journal.lines" >"$OUT/tmnb/journal.txt"
	fi
fi
if has crictl && live; then
	ids=$(tool crictl ps -q 2>>"$WORK/stderr")
	if [ -n "$ids" ]; then
		# shellcheck disable=SC2086 # one argument per container id
		tool crictl inspect $ids >"$OUT/tmnb/crictl.json" 2>>"$WORK/stderr" || note crictl "inspect failed"
	fi
else
	note crictl "not available (not installed, or not a live root)"
fi
{
	echo "collector=tmnb collect_node.sh 1"
	echo "captured_at=$(date -u +%Y-%m-%dT%H:%M:%SZ)"
	echo "kernel=$(uname -r)"
	echo "kubelet_pid=$KPID"
	if [ -n "$JSRC" ]; then
		echo "journal_source=$JSRC"
		echo "journal_since=$SINCE"
		echo "journal_max_bytes=$JMAX"
		echo "journal_max_lines=$LINES"
		echo "journal_truncated=$JTRUNC"
	fi
} >"$OUT/tmnb/meta.txt"

# --- one bounded bundle -----------------------------------------------------------------------
pack() { tar -C "$OUT" -czf "$WORK/bundle.tgz" . && size=$(wc -c <"$WORK/bundle.tgz"); }
pack || { echo "collect_node.sh: tar failed" >&2; exit 1; }
for optional in journal.txt crictl.json lscpu.json; do
	[ "$size" -le "$MAX" ] && break
	[ -f "$OUT/tmnb/$optional" ] || continue
	rm -f "$OUT/tmnb/$optional"
	note "tmnb/$optional" "dropped: the bundle was over the $MAX-byte cap"
	pack || exit 1
done
if [ "$size" -gt "$MAX" ]; then
	echo "collect_node.sh: bundle is $size bytes, over the $MAX-byte cap (-m)" >&2
	exit 3
fi
if [ "$B64" = 1 ]; then
	echo "--- tmnb bundle begin ---"
	base64 <"$WORK/bundle.tgz"
	echo "--- tmnb bundle end ---"
else
	cat "$WORK/bundle.tgz"
fi
