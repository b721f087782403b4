#!/usr/bin/env bash
# The docs, checked: every page is a readable size (a broken edit once multiplied one into 43 MB)
# and every relative link in them points at a file that exists.
set -euo pipefail
root=${1:?usage: check_docs.sh SOURCE_DIR}
cd "$root"
status=0
max_bytes=200000
for page in README.md docs/*.md; do
  size=$(stat -c %s "$page")
  if [ "$size" -gt "$max_bytes" ]; then
    echo "$page is $size bytes, over $max_bytes: was an edit applied once per character?" >&2
    status=1
  fi
  dir=$(dirname "$page")
  # Relative targets of [text](target) links; web addresses and in-page anchors are not files.
  while IFS= read -r target; do
    file=${target%%#*}
    [ -z "$file" ] && continue
    if [ ! -e "$dir/$file" ]; then
      echo "$page links to $target, which does not exist" >&2
      status=1
    fi
  done < <(grep -oE '\]\([^)[:space:]]+\)' "$page" | sed -E 's/^\]\((.*)\)$/\1/' | grep -vE '^(https?:|mailto:|#)' || true)
done
[ "$status" -eq 0 ] && echo "README.md and docs/*.md: sizes under $max_bytes bytes, every relative link resolves"
exit "$status"
