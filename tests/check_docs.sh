#!/usr/bin/env bash
# The docs, checked:
# - every page is a readable size (a broken edit once multiplied one into 43 MB);
# - every relative link and image in them points at a file that exists;
# - every repository path they quote in backticks (`bench/soak/soak.sh --smoke`, `core/io/...`)
#   exists, so a moved file cannot leave a page behind (a placeholder such as NAME, STAMP, <x>, a
#   glob or a {a,b} list ends the part that is checked: `bench/soak/results/soak-STAMP.{txt,json}`
#   checks that something starts with bench/soak/results/soak-);
# - counts and times in the README come from one place: it states no test count of its own (the
#   suite's size and time are in docs/testing.md), and each number of its headline table stands on
#   the page that row links to.
set -euo pipefail
root=${1:?usage: check_docs.sh SOURCE_DIR}
cd "$root"
status=0
max_bytes=200000
fail() {
  echo "$*" >&2
  status=1
}
pages=(README.md docs/*.md)
for page in "${pages[@]}"; do
  size=$(stat -c %s "$page")
  if [ "$size" -gt "$max_bytes" ]; then
    fail "$page is $size bytes, over $max_bytes: was an edit applied once per character?"
  fi
  dir=$(dirname "$page")
  # Relative targets of [text](target) links; web addresses and in-page anchors are not files.
  while IFS= read -r target; do
    file=${target%%#*}
    [ -z "$file" ] && continue
    [ -e "$dir/$file" ] || fail "$page links to $target, which does not exist"
  done < <(grep -oE '\]\([^)[:space:]]+\)' "$page" | sed -E 's/^\]\((.*)\)$/\1/' | grep -vE '^(https?:|mailto:|#)' || true)
  # Repository paths in `code` spans: the first word of a span that starts with a top folder.
  # shellcheck disable=SC2016 # the pattern's backticks are literal
  while IFS= read -r quoted; do
    path=${quoted%%[\{\*\<]*}
    path=$(sed -E 's/[A-Z]{3,}.*$//' <<<"$path")
    # core/X/... is short for core/include/ss/core/X/... or core/src/X/... (the docs name it so).
    compgen -G "$path*" >/dev/null || compgen -G "core/include/ss/$path*" >/dev/null ||
      compgen -G "core/src/${path#core/}*" >/dev/null || fail "$page names \`$quoted\`, which does not exist"
  done < <(grep -oE '`(bench|scripts|tests|docs|docker|deploy|schema|core|services|actors|cmake)/[^` ]*' "$page" |
    sed 's/^`//' | sort -u || true)
done

# The README's counts and times: the test suite's are docs/testing.md's alone.
if grep -nE '[0-9][0-9,]* (tests|test cases)\b' README.md >&2; then
  fail "README.md states a test count: the suite's size and time are in docs/testing.md; link there instead"
fi
# Each number of a headline row (| what | figure | [page](docs/PAGE.md#...) |) stands on PAGE.
while IFS= read -r row; do
  figure=$(awk -F' \\| ' '{ print $2 }' <<<"$row")
  page=$(grep -oE '\]\(docs/[^)#]+' <<<"$row" | head -1 | sed 's/^](//')
  [ -n "$page" ] || continue
  # shellcheck disable=SC2013 # one number a word
  for number in $(grep -oE '[0-9][0-9,.]*[0-9]' <<<"$figure"); do
    grep -qF -- "$number" "$page" || fail "README.md's headline '$figure' has $number, which $page does not state"
  done
done < <(sed -n '/^## Headline numbers/,/^## /p' README.md | grep -E '^\| .*\]\(docs/')

[ "$status" -eq 0 ] && echo "README.md and docs/*.md: sizes under $max_bytes bytes, every relative link and quoted path resolves, README counts agree with their pages"
exit "$status"
