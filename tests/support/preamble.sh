# What the shell tests of `tforge` share; sourced after `set -u` and the arguments:
#   . "$(dirname "$0")/../support/preamble.sh"
# $work, a scratch folder removed on exit; ok and bad counting passed and failed checks (bad
# prints FAIL: and its words); json FILE EXPR, a Python assertion over the JSON document `r`
# (with $python); finish NAME, the last line, its status the test's.
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
passed=0 failed=0
ok() { passed=$((passed + 1)); }
bad() { echo "FAIL: $*"; failed=$((failed + 1)); }
json() { "$python" -c "import json, sys; r = json.load(open(sys.argv[1])); assert $2, r" "$1" \
  2>"$work/assert.txt" || { cat "$work/assert.txt"; return 1; }; }
finish() {
  echo "$1: $passed passed, $failed failed"
  [ "$failed" = 0 ]
}
