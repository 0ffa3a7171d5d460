#!/usr/bin/env bash
# sanitize.sh -- the test suite once more against an AddressSanitizer and
# UndefinedBehaviorSanitizer build (gcc, -DPGNFS_SANITIZE=ON) in a second
# build tree: the server, the dbfs layer, the test programs and the
# clients are all instrumented. test.sh runs it after the ordinary pass.
#
#   tests/sanitize.sh [ctest arguments]
#
# Without arguments it runs every test but the style check (unit, dbfs,
# proto, fault, fsx, connectathon). Build tree: $PGNFS_SAN_BUILD, default
# build-san next to build.
#
# Any sanitizer report fails the run, even one from a process whose test
# did not notice (a server killed and restarted by a fault test): reports
# go to files under BUILD/sanitizer-reports, which are printed and counted
# at the end. ASan and UBSan halt at the first error; LeakSanitizer runs at
# every instrumented process's exit. With gcc's two runtimes in one
# process, the report file is the one UBSAN_OPTIONS names (so both name
# it), and UBSan's own message goes to stderr whatever is set (a test
# server's stderr is its log, deleted with its directory): so UBSan aborts
# after its message and ASan's SIGABRT handler writes a report, the
# __ubsan_handle_* frame and the line that caused it included, to the
# file. (A failed GLib assertion aborts too and leaves a report: that test
# has failed anyway.)
# PostgreSQL and its tools are not instrumented (not ours); libnfs's own
# leaks are suppressed (tests/lsan.supp). Exit status 0 = every test passed
# and no report was written.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
build=${PGNFS_SAN_BUILD:-$top/build-san}
reports=$build/sanitizer-reports

if [[ ! -f "$build/build.ninja" ]]; then
  cmake -S "$top" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DPGNFS_SANITIZE=ON >/dev/null
fi
cmake --build "$build" -j "$(nproc)"

rm -rf "$reports"
mkdir -p "$reports"
export ASAN_OPTIONS="log_path=$reports/asan:halt_on_error=1:detect_leaks=1:handle_abort=1"
export LSAN_OPTIONS="suppressions=$top/tests/lsan.supp:print_suppressions=0"
export UBSAN_OPTIONS="log_path=$reports/asan:halt_on_error=1:abort_on_error=1:print_stacktrace=1"

args=("$@")
[[ ${#args[@]} -gt 0 ]] || args=(-LE 'style|docker|ha')
status=0
(cd "$build" && ctest --output-on-failure -j 2 "${args[@]}") || status=$?

mapfile -t found < <(find "$reports" -type f | sort)
if [[ ${#found[@]} -gt 0 ]]; then
  for f in "${found[@]}"; do
    echo "==== sanitizer report $f" >&2
    cat "$f" >&2
  done
  echo "sanitize: ${#found[@]} sanitizer report(s) (above; kept in $reports)" >&2
  echo "sanitize: a stack that stops in a library without frame pointers (glib, libnfs) gets" \
    "whole when the test is run again with ASAN_OPTIONS=fast_unwind_on_malloc=0" >&2
  status=1
else
  echo "sanitize: no sanitizer report"
fi
exit $status
