#!/usr/bin/env bash
# Every shell command that README.md and docs/*.md show in a ```sh, ```bash or ```console
# block must appear verbatim in a file under tests/ or scripts/ (a test or a script a test
# runs), so that what the documents tell a reader to type is what the tests exercise.
#
# Usage: tests/docs/commands.sh SOURCE_ROOT
# Exit 0 when every command is found; 1 (naming each missing command) otherwise.
#
# What counts as a command: each line of such a block, except empty lines, comment-only lines
# and the continuation lines of a command whose previous line ends in a backslash; a trailing
# " # comment" is removed, and so is the trailing backslash of a continued first line. In a
# ```console block only lines starting with "$ " are commands (the rest is output). Fences may
# be indented (a block inside a list item).
set -u
root=${1:?usage: commands.sh SOURCE_ROOT}
cd "$root" || exit 1

# The quick start's two commands run from .ci/run (./scripts/test.sh) and from
# scripts/test.sh (./scripts/demo.sh), which is why .ci is searched too.
mapfile -t search_files < <(find tests scripts .ci -type f ! -path 'tests/docs/*' | sort)

missing=0
checked=0
for doc in README.md docs/*.md; do
	[ -f "$doc" ] || continue
	inblock=0 kind='' cont=0 n=0
	while IFS= read -r line || [ -n "$line" ]; do
		n=$((n + 1))
		fence="${line#"${line%%[![:space:]]*}"}"
		if [ "$inblock" = 0 ]; then
			case "$fence" in
			'```sh'|'```bash'|'```shell') inblock=1 kind=sh cont=0 ;;
			'```console') inblock=1 kind=console cont=0 ;;
			esac
			continue
		fi
		case "$fence" in
		'```'*) inblock=0; continue ;;
		esac
		if [ "$cont" = 1 ]; then
			case "$line" in *\\) cont=1 ;; *) cont=0 ;; esac
			continue
		fi
		cmd=$line
		if [ "$kind" = console ]; then
			case "$cmd" in '$ '*) cmd=${cmd#'$ '} ;; *) continue ;; esac
		fi
		# strip leading blanks
		cmd="${cmd#"${cmd%%[![:space:]]*}"}"
		case "$cmd" in ''|'#'*) continue ;; esac
		# a trailing " # comment" (a '#' after blanks)
		cmd=$(printf '%s\n' "$cmd" | sed -E 's/[[:space:]]+#.*$//')
		case "$cmd" in *\\) cont=1; cmd=$(printf '%s\n' "$cmd" | sed -E 's/[[:space:]]*\\$//') ;; esac
		[ -n "$cmd" ] || continue
		checked=$((checked + 1))
		if ! grep -qF -- "$cmd" "${search_files[@]}"; then
			echo "$doc:$n: not run by any test: $cmd"
			missing=$((missing + 1))
		fi
	done < "$doc"
done

if [ "$missing" -gt 0 ]; then
	echo "docs_commands: $missing of $checked commands are not found verbatim under tests/, scripts/ or .ci/"
	exit 1
fi
echo "docs_commands: all $checked commands found under tests/, scripts/ or .ci/"
exit 0
