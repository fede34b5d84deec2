#!/usr/bin/env bash
# Release benches of an older commit (BASE) and of this checkout, side by side
# in one run.
#
#   scripts/bench-side-by-side.sh BASE [BENCH...]
#   scripts/bench-side-by-side.sh --report BENCH_OUT_DIR    # print a run's table again
#
# BASE is any commit (`main~20`, `18b845c`); BENCH defaults to
# `run_path sandbox mcp`. What it does:
#
# 1. Checks BASE out in a git worktree of its own (BASE_SRC) and builds the
#    bench executables of both sides in the release profile with
#    `cargo bench --no-run -p skillhost --bench ...`, each side in its own
#    target dir (BASE_TARGET, CUR_TARGET). A missing BASE_TARGET is first
#    seeded with a copy of CUR_TARGET, so BASE only rebuilds what differs.
# 2. Runs each side's executables as `cargo bench` would (cwd `host/`, the
#    `--bench` argument, CARGO_MANIFEST_DIR, and CARGO_TARGET_DIR set to the
#    side's own target dir, where the benches build and cache their guest
#    components and criterion keeps its data). A warm-up run of the first
#    bench on each side builds the guests; it is not counted. Then ROUNDS
#    rounds, each bench its own process, the two sides alternating and the
#    side that goes first swapping every round (A B, B A, A B ...), so drift
#    on a shared machine hits both.
# 3. Reads every figure the benches print (criterion's `time:` middle
#    estimate, and each number of the benches' own lines: times in µs,
#    ratios, calls/s), and prints for each: the median over rounds of base
#    and of current, current/base, and a verdict by this rule: the noise of
#    a figure is the larger of the two sides' spread between rounds,
#    (max - min) / median; a ratio within 1 +- noise is "within noise".
#    Figures that never change (counts, targets) are left out.
#
# Environment (defaults in brackets):
#   ROUNDS       rounds counted [3]
#   BASE_SRC     worktree for BASE [/work/tgt/bench-base-src]
#   BASE_TARGET  BASE's target dir [/work/tgt/release-base]
#   CUR_SRC      the current checkout [this script's repository]
#   CUR_TARGET   the current checkout's target dir [/work/tgt/release]
#   BENCH_OUT_DIR  where outputs, logs and the table go
#                [/work/tgt/bench-side-by-side/<UTC time>] (not OUT_DIR:
#                build scripts such as ring's rebuild when that one changes)
#   NICE         niceness of the builds (the benches run at normal priority) [15]
#   FEATURES     passed to cargo as --features (e.g. forge for forge_*) []
#   SKIP_BUILD=1 reuse the executables the last build of each side listed
#                (the table's head names the commits they were built from)
#
# Needs git, cargo (with the wasm32-wasip2 target, for the guests) and python3.
set -euo pipefail

die() { echo "bench-side-by-side: $*" >&2; exit 1; }
log() { echo "[$(date -u +%H:%M:%S)] $*" >&2; }

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROUNDS=${ROUNDS:-3}
BASE_SRC=${BASE_SRC:-/work/tgt/bench-base-src}
BASE_TARGET=${BASE_TARGET:-/work/tgt/release-base}
CUR_SRC=${CUR_SRC:-$(git -C "$HERE" rev-parse --show-toplevel)}
CUR_TARGET=${CUR_TARGET:-/work/tgt/release}
NICE=${NICE:-15}
FEATURES=${FEATURES:-}

# --- the report: figures of every run under BENCH_OUT_DIR, one table ---
report() {
    python3 - "$1" <<'PY'
import re, statistics, sys
from pathlib import Path

out = Path(sys.argv[1])
TIME = {"ns": 1e-3, "µs": 1.0, "us": 1.0, "ms": 1e3, "s": 1e6}
NUM = re.compile(r"(?<![\w.])(-?\d+(?:\.\d+)?)(?:\s?(ns|µs|us|ms|s)(?!\w)|(x|%|\s?calls/s))?")
CRIT_TIME = re.compile(r"^(\S.*?)?\s+time:\s+\[([^\]]*)\]")
SKIP = re.compile(r"^\s*(change:|thrpt:|Found \d+ outliers|\d+ \(.*\) (high|low)|"
                  r"Benchmarking|Warming up|Performance has|No change|Change within|"
                  r"Gnuplot|WARNING|Warning)")

def figures(text):
    """(key, value, unit) of every figure in one bench's output."""
    last_id = None
    for line in text.splitlines():
        line = line.rstrip()
        m = CRIT_TIME.match(line)
        if m:
            bench_id = (m.group(1) or last_id or "?").strip()
            est = NUM.findall(m.group(2))
            if len(est) == 3:
                n, tu, _ = est[1]
                yield (f"criterion {bench_id}: time", float(n) * TIME[tu], "µs")
            continue
        if not line.strip() or SKIP.match(line):
            continue
        if not line[0].isspace() and "time:" not in line:
            last_id = line.strip()
        nums = list(NUM.finditer(line))
        if not nums:
            continue
        lead = " ".join(line[: nums[0].start()].split())[:48]
        ends = [0] + [m.end() for m in nums]
        starts = [m.start() for m in nums] + [len(line)]
        for i, m in enumerate(nums):
            n, tu, other = m.groups()
            # The words before the number name it; failing those, the ones after.
            before = " ".join(line[ends[i] : m.start()].split())[-36:]
            after = " ".join(line[m.end() : starts[i + 1]].split())[:36]
            name = before or after or (tu or other or "").strip()
            label = lead if i == 0 else f"{lead} … {name}"
            if tu:
                yield (f"{label} [{i}]", float(n) * TIME[tu], "µs")
            else:
                yield (f"{label} [{i}]", float(n), (other or "").strip())

runs = {}  # (bench, key) -> side -> [values]
units = {}
for f in sorted(out.glob("r*-*-*.out")):
    rnd, side, bench = f.stem.split("-", 2)
    seen = {}
    for key, value, unit in figures(f.read_text(errors="replace")):
        # A key printed twice in one run (a repeated line) keeps each one.
        k = (bench, key if key not in seen else f"{key} #{seen[key] + 1}")
        seen[key] = seen.get(key, 0) + 1
        runs.setdefault(k, {}).setdefault(side, []).append(value)
        units[k] = unit

def spread(v):
    med = statistics.median(v)
    return (max(v) - min(v)) / abs(med) if med else 0.0

def show(v, unit):
    if unit == "µs":
        return f"{v / 1e3:.3f} ms" if v >= 1e3 else f"{v:.2f} µs"
    num = f"{v:,.0f}" if abs(v) >= 1000 else f"{v:.4g}"
    return f"{num}{'' if unit in ('', 'x', '%') else ' '}{unit}"

rows, missing = [], []
for (bench, key), sides in runs.items():
    b, c = sides.get("base", []), sides.get("current", [])
    if not b or not c:
        missing.append(f"{bench}: {key} (only {'base' if b else 'current'})")
        continue
    if len(set(b + c)) == 1:
        continue  # a constant: a count, a target, a core count
    unit = units[(bench, key)]
    mb, mc = statistics.median(b), statistics.median(c)
    ratio = mc / mb if mb else float("inf")
    noise = max(spread(b), spread(c))
    if len(b) < 2 or len(c) < 2:
        verdict = "no noise estimate (one round)"
    elif abs(ratio - 1) <= noise:
        verdict = "within noise"
    else:
        higher = ratio > 1
        if unit == "µs":
            verdict = "SLOWER" if higher else "faster"
        elif unit == "calls/s":
            verdict = "faster" if higher else "SLOWER"
        else:
            verdict = "higher" if higher else "lower"
        verdict += f" (beyond noise ±{noise:.0%})"
    rows.append((bench, key, show(mb, unit), show(mc, unit), f"{ratio:.3f}",
                 f"{spread(b):.0%}/{spread(c):.0%}", f"{len(b)}/{len(c)}", verdict))

head = ("bench", "figure", "base", "current", "cur/base", "spread b/c", "n b/c", "verdict")
wid = [max(len(str(r[i])) for r in rows + [head]) for i in range(len(head))]
wid[1] = min(wid[1], 90)
for r in [head] + rows:
    print("  ".join(str(x)[: wid[i]].ljust(wid[i]) for i, x in enumerate(r)).rstrip())
beyond = [r for r in rows if r[-1] != "within noise" and "one round" not in r[-1]]
within = sum(r[-1] == "within noise" for r in rows)
print(f"\n{within} of {len(rows)} figures within noise; {len(beyond)} beyond it:")
for r in beyond:
    print(f"  {r[0]}: {r[1]}: {r[2]} -> {r[3]} ({r[4]}), {r[-1]}")
if missing:
    print("\nFigures only one side printed (the bench's output changed):")
    for m in missing:
        print("  " + m)
print("\nRule: noise = the larger of the two sides' (max - min) / median over rounds;"
      " a cur/base within 1 ± noise is within noise. Medians over rounds.")
PY
}

if [[ ${1:-} == --report ]]; then
    [[ -d ${2:-} ]] || die "--report needs the BENCH_OUT_DIR of a run"
    cat "$2/sides" 2>/dev/null || true
    report "$2"
    exit 0
fi

[[ $# -ge 1 ]] || die "usage: $0 BASE [BENCH...]   (see the top of this file)"
BASE=$1
shift
BENCHES=("$@")
[[ ${#BENCHES[@]} -gt 0 ]] || BENCHES=(run_path sandbox mcp)
BENCH_OUT_DIR=${BENCH_OUT_DIR:-/work/tgt/bench-side-by-side/$(date -u +%Y%m%dT%H%M%S)}
mkdir -p "$BENCH_OUT_DIR"
command -v python3 >/dev/null || die "python3 is needed to read the benches' output"

BASE_SHA=$(git -C "$CUR_SRC" rev-parse --verify --quiet "$BASE^{commit}") ||
    die "$BASE is not a commit of $CUR_SRC"

# --- the base worktree --------------------------------------------------
checkout_base() {
    if [[ -e $BASE_SRC ]]; then
        local top
        top=$(git -C "$BASE_SRC" rev-parse --show-toplevel 2>/dev/null) ||
            die "$BASE_SRC exists and is not a git checkout; set BASE_SRC"
        [[ $top == "$(cd "$BASE_SRC" && pwd -P)" ]] || die "$BASE_SRC is inside $top, not a worktree of its own"
        [[ -z $(git -C "$BASE_SRC" status --porcelain --untracked-files=no) ]] ||
            die "$BASE_SRC has local changes; clean it or set BASE_SRC"
        git -C "$BASE_SRC" checkout --quiet --detach "$BASE_SHA"
    else
        git -C "$CUR_SRC" worktree add --quiet --detach "$BASE_SRC" "$BASE_SHA"
    fi
}

# Builds one side's bench executables; writes "name<TAB>path" lines to $3.
build_side() {
    local src=$1 target=$2 list=$3 side=$4 args=()
    for b in "${BENCHES[@]}"; do args+=(--bench "$b"); done
    [[ -z $FEATURES ]] || args+=(--features "$FEATURES")
    log "building $side ($src) into $target; log: $BENCH_OUT_DIR/build-$side.log"
    (cd "$src" && CARGO_TARGET_DIR=$target nice -n "$NICE" \
        cargo bench --no-run -p skillhost "${args[@]}" --message-format=json-render-diagnostics \
        2>"$BENCH_OUT_DIR/build-$side.log") | python3 -c '
import json, sys
for line in sys.stdin:
    try:
        m = json.loads(line)
    except ValueError:
        continue
    t = m.get("target", {})
    if m.get("reason") == "compiler-artifact" and "bench" in t.get("kind", []) and m.get("executable"):
        print(t["name"] + "\t" + m["executable"])
' >"$list.new" || die "the $side build failed; see $BENCH_OUT_DIR/build-$side.log"
    mv "$list.new" "$list"
    git -C "$src" describe --always --dirty >"$list.commit"
}

exe_of() { # list bench
    awk -F'\t' -v b="$2" '$1 == b { print $2 }' "$1"
}

BASE_LIST=$BASE_TARGET/bench-side-by-side.exes
CUR_LIST=$CUR_TARGET/bench-side-by-side.exes
checkout_base
if [[ ${SKIP_BUILD:-} != 1 ]]; then
    if [[ ! -d $BASE_TARGET && -d $CUR_TARGET ]]; then
        log "seeding $BASE_TARGET with a copy of $CUR_TARGET (dependencies build once)"
        cp -a --reflink=auto "$CUR_TARGET" "$BASE_TARGET"
    fi
    mkdir -p "$BASE_TARGET" "$CUR_TARGET"
    start=$SECONDS
    build_side "$BASE_SRC" "$BASE_TARGET" "$BASE_LIST" base
    log "base built in $((SECONDS - start)) s"
    start=$SECONDS
    build_side "$CUR_SRC" "$CUR_TARGET" "$CUR_LIST" current
    log "current built in $((SECONDS - start)) s"
fi
for list in "$BASE_LIST" "$CUR_LIST"; do
    [[ -f $list ]] || die "no build listed in $list; run without SKIP_BUILD"
    for b in "${BENCHES[@]}"; do
        exe=$(exe_of "$list" "$b")
        [[ -x $exe ]] || die "no executable for bench $b in $list"
    done
done

# What each side's executables were built from (with SKIP_BUILD, not
# necessarily what is checked out now).
{
    echo "base:    $(cat "$BASE_LIST.commit" 2>/dev/null) ($BASE_SRC, $BASE_TARGET)"
    echo "current: $(cat "$CUR_LIST.commit" 2>/dev/null) ($CUR_SRC, $CUR_TARGET)"
    echo "benches: ${BENCHES[*]}; rounds: $ROUNDS"
} | tee "$BENCH_OUT_DIR/sides" >&2

# Runs one side's bench as `cargo bench` would; output to $BENCH_OUT_DIR/$3.
run_one() {
    local side=$1 bench=$2 name=$3 src target list exe start
    if [[ $side == base ]]; then src=$BASE_SRC target=$BASE_TARGET list=$BASE_LIST
    else src=$CUR_SRC target=$CUR_TARGET list=$CUR_LIST; fi
    exe=$(exe_of "$list" "$bench")
    start=$SECONDS
    (cd "$src/host" && env CARGO_TARGET_DIR="$target" CARGO_MANIFEST_DIR="$src/host" \
        CARGO_MANIFEST_PATH="$src/host/Cargo.toml" CARGO_PKG_NAME=skillhost \
        "$exe" --bench >"$BENCH_OUT_DIR/$name.out" 2>"$BENCH_OUT_DIR/$name.err") ||
        die "$side $bench failed; see $BENCH_OUT_DIR/$name.err"
    log "$name: $((SECONDS - start)) s"
}

log "warm-up (not counted): ${BENCHES[0]} on each side builds its guests"
run_one base "${BENCHES[0]}" warmup-base-"${BENCHES[0]}"
run_one current "${BENCHES[0]}" warmup-current-"${BENCHES[0]}"
run_start=$SECONDS
for ((r = 1; r <= ROUNDS; r++)); do
    if ((r % 2)); then order=(base current); else order=(current base); fi
    for b in "${BENCHES[@]}"; do
        for side in "${order[@]}"; do run_one "$side" "$b" "r$r-$side-$b"; done
    done
done
log "$ROUNDS rounds in $((SECONDS - run_start)) s; outputs in $BENCH_OUT_DIR"
report "$BENCH_OUT_DIR" | tee "$BENCH_OUT_DIR/table.txt"
