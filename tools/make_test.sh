#!/usr/bin/env bash
# make test: every part runs and reports, then the run fails if any part failed, so a failing
# notebook under the native configuration never hides the result under the second one.
#   1. the site build (Sphinx, one core) beside the unit tests (everything in tests/ that does
#      not need the built site);
#   2. nbval over every notebook under this machine's numeric configuration, with the checks
#      of the built site (tests/test_site.py, the PDF check and the browser test);
#   3. nbval again under the configuration farthest from it (tools/nbgate.py --alt-env: the
#      narrowest OpenBLAS kernel, one thread, numba compiled for a generic CPU);
#   4. the unit tests again under that configuration: a test whose tolerance or step count holds
#      only for this machine's kernel fails here, not on a reader's CPU (CI once failed on a test
#      that passed natively and failed under OpenBLAS Sandybridge).
set -u
BIN=${BIN:-.venv/bin}
JOBS=${JOBS:-2}
declare -a names results

record() { names+=("$1"); results+=("$2"); }

rm -rf _build/html   # no stale page from an earlier build reaches the site checks
echo "site build (log: _build_log.txt) beside the unit tests"
"$BIN/jupyter-book" build --all -W -n --keep-going . > _build_log.txt 2>&1 & book=$!
"$BIN/python" -m pytest -n "$JOBS" --dist loadfile -rs -m "not site" tests
record "unit tests" $?
wait "$book"; site=$?
[ "$site" = 0 ] || { cat _build_log.txt; echo "make test: the site build failed (log above)"; }
record "site build (jupyter-book -W)" "$site"

"$BIN/python" tests/browser/browserlib.py
site_checks=(tests/test_site.py tests/browser)
[ "$site" = 0 ] || site_checks=()   # nothing to check without a site; the build failure is reported
"$BIN/python" -m pytest -n "$JOBS" --dist loadfile -rs --nbval "${site_checks[@]}" chapters
record "nbval (native) + site checks" $?

alt=$("$BIN/python" tools/nbgate.py --alt-env)
echo "nbval under a second numeric configuration: $alt"
# shellcheck disable=SC2086 - $alt is a list of env(1) words
env $alt "$BIN/python" -m pytest -q -n "$JOBS" --dist loadfile --nbval chapters
record "nbval ($alt)" $?

echo "unit tests under the second numeric configuration"
# shellcheck disable=SC2086
env $alt "$BIN/python" -m pytest -q -n "$JOBS" --dist loadfile -m "not site" tests
record "unit tests ($alt)" $?

failed=0
echo
echo "make test summary:"
for i in "${!names[@]}"; do
  if [ "${results[$i]}" = 0 ]; then echo "  PASSED  ${names[$i]}"; else echo "  FAILED  ${names[$i]} (exit ${results[$i]})"; failed=1; fi
done
exit "$failed"
