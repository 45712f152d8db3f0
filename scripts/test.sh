#!/usr/bin/env bash
# Builds softrnic and runs every test: the unit and integration tests in a normal build and
# again under ASan+UBSan, part of them in a release build with link-time optimisation, then a
# short bounded run of each fuzz target from its kept corpus.
# Ends with one line "N passed, N failed" and exits non-zero if anything failed.
#   FUZZ_SECONDS=N   seconds per fuzz target (default 20; 0 skips fuzzing)
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD

bash scripts/deps.sh || { echo "deps: could not install the packages the tests need" >&2; exit 1; }

FUZZ_SECONDS=${FUZZ_SECONDS:-20}
passed=0
failed=0
failures=()

flaky=()

# $1 = build dir, $2 = label, $3 = log base; the rest runs the tests (a command and its
# environment). A test that fails is shown (the end of its output) and run once more on its
# own: a test that passes then counts as passed but is listed as FLAKY at the end, with the
# output of its failure above, so an intermittent failure is seen without failing the run.
count_meson_results() {
  local dir=$1 label=$2 base=$3 log counts p f names again
  shift 3
  log="$dir/meson-logs/$base.json"
  [ -f "$log" ] || { failed=$((failed + 1)); failures+=("$label: no test log"); return; }
  counts=$(python3 scripts/meson_results.py count "$log")
  read -r p f names <<<"$counts"
  passed=$((passed + p))
  [ "$f" -gt 0 ] || return
  echo "-- $label: $f failed: $names; their output, then each once more on its own"
  # shellcheck disable=SC2086
  python3 scripts/meson_results.py show "$log" $names
  # shellcheck disable=SC2086
  "$@" -C "$dir" --print-errorlogs --num-processes 1 --logbase "$base-again" $names | tail -15
  counts=$(python3 scripts/meson_results.py count "$dir/meson-logs/$base-again.json")
  read -r p f again <<<"$counts"
  passed=$((passed + p))
  failed=$((failed + f))
  [ "$f" -gt 0 ] && failures+=("$label: $again")
  for n in $names; do
    case " $again " in *" $n "*) ;; *) flaky+=("$label: $n") ;; esac
  done
}

setup_build() {   # $1 = dir, $2 = label, rest = meson setup options
  local dir=$1 label=$2
  shift 2
  [ -f "$dir/build.ninja" ] && return 0
  meson setup "$dir" "$@" >"$dir.setup.log" 2>&1 && return 0
  cat "$dir.setup.log"; failed=$((failed + 1)); failures+=("$label: setup"); return 1
}

build_targets() {   # $1 = dir, $2 = label, rest = ninja targets (none: all of them)
  local dir=$1 label=$2
  shift 2
  ninja -C "$dir" "$@" >"$dir.build.log" 2>&1 && return 0
  tail -50 "$dir.build.log"; failed=$((failed + 1)); failures+=("$label: build"); return 1
}

run_build() {   # $1 = dir, $2 = label, rest = meson setup options
  setup_build "$@" && build_targets "$1" "$2"
}

# $1 = dir, $2 = label, rest = scripts/meson_targets.py's selection: builds what it names
build_needed() {
  local dir=$1 label=$2 targets
  shift 2
  # regenerate first if a meson.build changed, so the introspection lists every test
  ninja -C "$dir" build.ninja >"$dir.regen.log" 2>&1 ||
    { cat "$dir.regen.log"; failed=$((failed + 1)); failures+=("$label: setup"); return 1; }
  mapfile -t targets < <(python3 scripts/meson_targets.py "$dir" "$@")
  if [ "${#targets[@]}" -eq 0 ]; then
    failed=$((failed + 1)); failures+=("$label: no targets for $*"); return 1
  fi
  build_targets "$dir" "$label" "${targets[@]}"
}

echo "== build and test (debugoptimized)"
if run_build build plain; then
  meson test -C build --print-errorlogs --num-processes 2 | tail -25
  count_meson_results build plain testlog meson test
fi

# The README's first command, as a new user runs it: the plain build above serves it.
echo "== the demo (./scripts/demo.sh)"
if ./scripts/demo.sh >build/demo.log 2>&1; then
  passed=$((passed + 1)); tail -1 build/demo.log
else
  failed=$((failed + 1)); failures+=("demo: ./scripts/demo.sh (build/demo.log)"); tail -30 build/demo.log
fi

echo "== build and test (ASan + UBSan)"
if run_build build-san sanitizers -Db_sanitize=address,undefined -Db_lundef=false; then
  export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
  # the 10-run loops (suite 'repeat') run once, in the plain build: under ASan a single run
  # of each program covers the same code; so does the soak (suite 'soak'), whose minutes of
  # random traffic the adversary, the fuzz targets and the data-path tests cover here
  meson test -C build-san --print-errorlogs --num-processes 2 --no-suite repeat \
    --no-suite soak | tail -25
  count_meson_results build-san sanitizers testlog meson test --no-suite repeat --no-suite soak
  unset ASAN_OPTIONS UBSAN_OPTIONS
fi

# The release build (scripts/build-release.sh) is link-time optimised: the optimiser then sees
# across the static libraries and into the tests, which has exposed what a unit-at-a-time
# build hid (symbol versions bound by .symver directives, a store a signal handler reads).
# The suites where that showed, and the unit suites, in a release build with LTO (no PGO).
echo "== build and test (release with link-time optimisation)"
# the drop-in suites for the symbol versions, without what only runs the same programs
# longer (suites 'repeat' and 'app-runs', run in the other two builds); only the programs
# these tests run are built (scripts/meson_targets.py): each link optimises the whole program
lto_suites=(--suite dropin --suite dropin-dpdk --suite rnic --suite verbs --suite rdmacm
  --suite mpa --suite ddp --suite rdmap --suite tcp --suite integration
  --no-suite repeat --no-suite app-runs)
if setup_build build-lto lto -Dbuildtype=release -Db_lto=true &&
   build_needed build-lto lto "${lto_suites[@]}" dpdk_fault; then
  meson test -C build-lto --no-rebuild --print-errorlogs --num-processes 2 "${lto_suites[@]}" | tail -25
  count_meson_results build-lto lto testlog meson test --no-rebuild
  meson test -C build-lto --no-rebuild --print-errorlogs --logbase testlog-fault dpdk_fault | tail -5
  count_meson_results build-lto lto testlog-fault meson test --no-rebuild
fi

if [ "$FUZZ_SECONDS" -gt 0 ]; then
  echo "== fuzz (${FUZZ_SECONDS}s per target, libFuzzer)"
  # only the fuzz targets: nothing else runs in this build
  if CC=clang setup_build build-fuzz fuzz -Dfuzz=true -Db_lundef=false -Db_sanitize=address,undefined &&
     build_needed build-fuzz fuzz --prefix fuzz_; then
    for target in build-fuzz/tests/fuzz/fuzz_*; do
      [ -f "$target" ] && [ -x "$target" ] || continue
      name=$(basename "$target")
      corpus="$ROOT/tests/fuzz/corpus/${name#fuzz_}"
      work=$(mktemp -d)
      # Fuzz into a scratch corpus so the kept one changes only when someone commits to it.
      if "$target" -max_total_time="$FUZZ_SECONDS" -print_final_stats=0 "$work" "$corpus" \
           >"build-fuzz/$name.log" 2>&1; then
        passed=$((passed + 1)); echo "fuzz $name: ok"
      else
        failed=$((failed + 1)); failures+=("fuzz: $name"); echo "fuzz $name: FAILED"; tail -30 "build-fuzz/$name.log"
      fi
      rm -rf "$work"
    done
  fi
fi

# Interop with the real Linux siw driver in QEMU guests (docs/interop.md): rping over kernel TCP
# and over softrnic's TCP engine on DPDK (af_packet on the guests' bridge), and iwarp-conform's
# checks between softrnic and siw both ways and siw against siw (docs/conform.md); exit 77 =
# skipped where QEMU cannot run. INTEROP=0 leaves it out.
run_interop() {   # $1 = script, $2 = what it checks, $3 = where its results are, $4 = its name
  echo "== interop with Linux siw$2 ($1)"
  "$1" build
  case $? in
    0) passed=$((passed + 1)) ;;
    77) echo "interop$2: skipped" ;;
    *) failed=$((failed + 1)); failures+=("interop: ${4:-siw rping$2} (see $3)") ;;
  esac
}
if [ "${INTEROP:-1}" != 0 ]; then
  run_interop tests/interop/siw_rping.sh "" build/interop-ci
  run_interop tests/interop/siw_dpdk.sh " over softrnic's TCP on DPDK" build/interop-dpdk
  run_interop tests/interop/siw_conform.sh ": iwarp-conform" build/interop-conform \
    "siw iwarp-conform"
fi

# The Debian packages (debian/, tests/deb/deb.sh): built, lintian-checked, installed with dpkg
# into a root of the test's own and used from there; exit 77 = skipped (not root). DEB=0
# leaves it out.
if [ "${DEB:-1}" != 0 ]; then
  echo "== Debian packages (tests/deb/deb.sh)"
  tests/deb/deb.sh build/deb >build/deb.log 2>&1
  case $? in
    0) passed=$((passed + 1)); tail -1 build/deb.log ;;
    77) tail -1 build/deb.log ;;
    *) failed=$((failed + 1)); failures+=("deb: tests/deb/deb.sh (build/deb.log)"); tail -30 build/deb.log ;;
  esac
fi

echo
for f in "${flaky[@]}"; do echo "FLAKY (failed, then passed on its own; output above): $f"; done
for f in "${failures[@]}"; do echo "FAILED: $f"; done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
