# shellcheck shell=bash
# tools/lib.sh - shell functions shared by tools/run, tools/test and tools/bench.
# Sourced, not executed.  Callers run under `set -euo pipefail`.

# The repository root, whatever the caller's working directory.
CS_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

# Debian packages the build, the tests and the figures need.
CS_PACKAGES=(
    build-essential
    meson
    ninja-build
    pkg-config
    libevent-dev
    libigraph-dev
    libcriterion-dev
    libcairo2-dev
    # the service's PNG heatmaps encoded for speed (src/io/png_fast.c)
    libpng-dev
    libxml2-dev
    # `collsim serve` reads request bodies with jansson (docs/api.md)
    libjansson-dev
    # Chakra execution traces (docs/chakra.md): protobuf-c and its compiler
    libprotobuf-c-dev
    protobuf-c-compiler
    # ASTRA-sim's analytical network files (net:file=X.yml, docs/networks.md)
    libyaml-dev
    # animated heatmap frames (--frames FILE.gif, docs/figures.md): giflib
    libgif-dev
    # the Python module's tests (tests/python) and examples/allreduce_sweep.py
    python3
    python3-numpy
    python3-pandas
    python3-matplotlib
    # pdftotext: app/figures reads the tick labels of a comparison's PDF back
    # (cairo's SVG draws text as glyph outlines); the test skips without it
    poppler-utils
    # the man page, generated from the help texts when found (optional)
    help2man
    # the zsh completion's test runs it in a real zsh (skipped without)
    zsh
    # --mpi (docs/cluster.md): OpenMPI, an optional meson feature; the
    # test of mpirun -n 2 is skipped without it
    libopenmpi-dev
    openmpi-bin
)

cs_log() {
    printf '==> %s\n' "$*" >&2
}

# Installs the packages of CS_PACKAGES that are missing.  Idempotent: when all
# are installed it touches neither the network nor apt's lists.
cs_ensure_packages() {
    local missing=() pkg status
    for pkg in "${CS_PACKAGES[@]}"; do
        status="$(dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null || true)"
        if [[ "$status" != "install ok installed" ]]; then
            missing+=("$pkg")
        fi
    done
    if ((${#missing[@]} == 0)); then
        return 0
    fi

    local sudo=()
    if [[ "$(id -u)" != 0 ]]; then
        if command -v sudo >/dev/null 2>&1; then
            sudo=(sudo)
        else
            echo "tools: missing packages (${missing[*]}) and not root; install them first" >&2
            return 1
        fi
    fi
    cs_log "installing ${missing[*]}"
    "${sudo[@]}" apt-get update
    "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive \
        apt-get install -y --no-install-recommends "${missing[@]}"
}

# cs_build DIR [MESON_OPTION...]: configures DIR (or reconfigures it with the
# given options when it exists) and builds it.
cs_build() {
    local dir="$1"
    shift
    # Explicit returns: callers may run this in a `||` list, where bash
    # ignores `set -e`.
    cd "$CS_ROOT" || return 1
    if [[ -f "$dir/build.ninja" ]]; then
        # Reconfigure so that options given now take effect; a build dir from
        # another meson version cannot be reconfigured, so wipe it then.
        if ! meson setup --reconfigure "$dir" "$@"; then
            cs_log "reconfiguring $dir failed; wiping it"
            meson setup --wipe "$dir" "$@" || return 1
        fi
    else
        meson setup "$dir" "$@" || return 1
    fi
    cs_log "building $dir"
    ninja -C "$dir"
}

# Criterion test cases (SUITE/NAME) that the sanitizer pass of tools/test
# leaves to the plain pass, to keep tools/test under 10 minutes on a 2-core
# machine (issue 19).  Only cases that repeat, through the command line,
# code that other cases already run under the sanitizers; each line says
# which.  Everything else runs in both passes.
CS_SANITIZER_SKIP=(
    # 3 processes (run, export, replay) for each of ~60 algorithms on 2
    # machines: the builders run in process under ASan in coll/suite
    # (every algorithm, P and size), export's GOAL writer and the reader in
    # io/goal and replay/exported_samples_match_their_runs.
    'replay/round_trip_every_algorithm'
    # ~170 processes, one per bad option (44 s of CPU under ASan): what it
    # checks is the message text and exit status, which the plain pass
    # checks; option parsing and its error paths run under ASan in app/cli,
    # app/replay and errors/every_malformed_trace.
    'errors/every_option_of_every_command'
    # one diameter of the 10,440-TSP system through the topology's BFS
    # (30 s under ASan): groq/full_system_of_145_racks builds the same
    # machine under the sanitizers, and cs_topo_stats runs in topo/topo
    'groq/tsp_level_diameter_of_the_full_system'
)

# Sanitizer settings for the tests: UBSan stops at the first error (by
# default it only prints), and both print stack traces.  Criterion skips
# CS_SANITIZER_SKIP (CRITERION_TEST_PATTERN is its --filter: an extglob).
cs_sanitizer_env() {
    # A 16 MB quarantine (ASan's default is 256 MB) still holds the blocks
    # freed last, where a use after free looks; the default made every
    # allocation of a simulation touch fresh pages: 38 s of CPU for
    # coll/reduce against 23 s.
    export ASAN_OPTIONS="${ASAN_OPTIONS:-abort_on_error=0:detect_leaks=1:quarantine_size_mb=16}"
    export UBSAN_OPTIONS="${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}"
    if ((${#CS_SANITIZER_SKIP[@]} > 0)); then
        local IFS='|'
        export CRITERION_TEST_PATTERN="!(${CS_SANITIZER_SKIP[*]})"
    fi
}
