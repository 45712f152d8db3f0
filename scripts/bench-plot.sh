#!/usr/bin/env bash
# Draws a benchmark's CSV (the schema of scripts/bench-lib.sh: bench,figure,size,unit,softrnic,
# baseline,ratio,run) as one PNG with gnuplot, a panel a kind of figure:
#   - by message size: a figure measured at two sizes or more, one panel per unit (latency in
#     us, bandwidth in Gbit/s, MiB/s ..., message rate in M msg/s): softrnic as a solid line,
#     its baseline dashed in the same colour; the size axis is logarithmic (base 2), and the
#     value axis too when the values span more than a decade;
#   - at one size, against a baseline: a bar of softrnic / baseline per figure, the line at 1
#     where the two are equal (a stream, without a size, counts as one size);
#   - at one size, without a baseline: a bar of the value per figure, one panel per unit.
# Each point is the median of the figure's runs at that size (every run stays in the CSV).
# Values <= 0 (a run that did not complete) are left out.
# Usage: scripts/bench-plot.sh CSV PNG   Exit status: 0 drawn, 1 failed, 2 usage.
set -euo pipefail
[ $# -eq 2 ] || { echo "usage: bench-plot.sh CSV PNG" >&2; exit 2; }
CSV=$1
PNG=$2
die() { echo "bench-plot.sh: $*" >&2; exit 1; }
command -v gnuplot >/dev/null || die "gnuplot missing (scripts/deps.sh installs gnuplot-nox)"
[ -r "$CSV" ] || die "cannot read $CSV"
[ "$(head -n 1 "$CSV")" = "bench,figure,size,unit,softrnic,baseline,ratio,run" ] ||
	die "$CSV: not the bench CSV schema (header bench,figure,size,unit,softrnic,baseline,ratio,run)"

D=$(mktemp -d /tmp/srn-bench-plot.XXXXXX)
trap 'rm -rf "$D"' EXIT

# Medians per (figure, unit, size), then each figure's kind from its count of sizes:
# $D/points: KIND FIGURE UNIT SIZE SOFTRNIC BASELINE RATIO ("-": none), KIND bysize, ratio or
# value; fields separated by tabs (figure names may hold spaces).
awk -F, '
function med(list,   n, a, i, j, t) {
	n = split(list, a, " ")
	if (n == 0) return "-"
	for (i = 2; i <= n; i++) { t = a[i] + 0; for (j = i - 1; j >= 1 && a[j] + 0 > t; j--) a[j + 1] = a[j]; a[j + 1] = t }
	return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
NR == 1 { next }
NF != 8 { printf "bench-plot.sh: line %d: %d fields, not 8\n", NR, NF > "/dev/stderr"; bad = 1; next }
$5 + 0 <= 0 { next }
{
	k = $2 SUBSEP $4 SUBSEP $3
	if (!(k in seen)) { seen[k] = 1; order[++n] = k }
	s[k] = s[k] " " $5
	if ($6 + 0 > 0) b[k] = b[k] " " $6
	if ($7 + 0 > 0) r[k] = r[k] " " $7
	fu = $2 SUBSEP $4
	if (!((fu SUBSEP $3) in sz)) { sz[fu SUBSEP $3] = 1; nsz[fu]++ }
	if ($3 == "") nostream[fu] = 1
}
END {
	if (bad) exit 1
	for (i = 1; i <= n; i++) {
		split(order[i], f, SUBSEP)
		fu = f[1] SUBSEP f[2]
		kind = nsz[fu] >= 2 && !(fu in nostream) ? "bysize" : (order[i] in b || order[i] in r) ? "ratio" : "value"
		ra = med(r[order[i]])
		if (ra == "-" && (order[i] in b)) ra = med(s[order[i]]) / med(b[order[i]])
		printf "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", kind, f[1], f[2], f[3], med(s[order[i]]), med(b[order[i]]), ra
	}
}' "$CSV" >"$D/points" || die "$CSV: malformed"
[ -s "$D/points" ] || die "$CSV: no figure with a value"

bench=$(awk -F, 'NR == 2 { print $1 }' "$CSV")
stem=$(basename "$CSV" .csv)
# gnuplot string: no quotes or backslashes from a figure name
gq() { printf '"%s"' "$(printf '%s' "$1" | tr -d '\042\134')"; }

# Each panel's commands go to $D/panel.N with its height in pixels in $D/height.N: a panel
# is as tall as its plot plus its legend, below it, two series a line.
panels=0
panel() { # HEIGHT: starts the next panel; its commands are appended to $P
	panels=$((panels + 1))
	P=$D/panel.$panels
	: >"$P"
	echo "$1" >"$D/height.$panels"
}

# panels by size: one per unit
units=$(awk -F'\t' '$1 == "bysize" { print $3 }' "$D/points" | awk '!seen[$0]++')
while IFS= read -r unit; do
	[ -n "$unit" ] || continue
	nfig=$(awk -F'\t' -v u="$unit" '$1 == "bysize" && $3 == u { print $2 }' "$D/points" | sort -u | wc -l)
	panel $((430 + nfig * 34))
	case $unit in
	us | ms | ns | s) what="latency ($unit)" ;;
	*msg/s) what="message rate ($unit)" ;;
	*/s) what="bandwidth ($unit)" ;;
	*) what=$unit ;;
	esac
	plot=()
	c=0
	while IFS= read -r fig; do
		c=$((c + 1))
		f=$D/bysize.$panels.$c
		awk -F'\t' -v fig="$fig" -v u="$unit" '$1 == "bysize" && $2 == fig && $3 == u {
			print $4, $5, ($6 == "-" ? "NaN" : $6) }' "$D/points" | sort -n >"$f"
		plot+=("$(gq "$f") using 1:2 with linespoints lw 2 pt 7 dt 1 lc $c title $(gq "$fig softrnic")")
		if awk '$3 != "NaN" { found = 1 } END { exit !found }' "$f"; then
			plot+=("$(gq "$f") using 1:3 with linespoints lw 2 pt 6 dt 2 lc $c title $(gq "$fig baseline")")
		fi
	done < <(awk -F'\t' -v u="$unit" '$1 == "bysize" && $3 == u { print $2 }' "$D/points" | awk '!seen[$0]++')
	span=$(awk -F'\t' -v u="$unit" '$1 == "bysize" && $3 == u {
		for (i = 5; i <= 6; i++) if ($i != "-" && $i + 0 > 0) { if (!lo || $i + 0 < lo) lo = $i + 0; if ($i + 0 > hi) hi = $i + 0 } }
		END { print (lo > 0 && hi / lo > 10) ? "log" : "lin" }' "$D/points")
	# a tic every power of 2 up to 8 of them, else every 4th or 8th ...
	step=$(awk -F'\t' -v u="$unit" '$1 == "bysize" && $3 == u {
		if (!lo || $4 + 0 < lo) lo = $4 + 0; if ($4 + 0 > hi) hi = $4 + 0 }
		END { s = 2; while (log(hi / lo) / log(s) > 8) s *= 2; print s }' "$D/points")
	{
		# no x label: the legend below would cover it
		echo "set title $(gq "$what by message size in octets, Ki = 1024 (median of the runs)")"
		echo "set ylabel $(gq "$unit")"
		echo "set logscale x 2"
		echo "set xtics 1, $step"   # at powers of 2, whatever the smallest size
		echo "set format x '%.0b%B'"
		if [ "$span" = log ]; then echo "set logscale y 10"; else echo "set yrange [0:*]"; fi
		echo "set key below left Left reverse maxcols 2"
		echo "plot $(IFS=,; echo "${plot[*]}")"
	} >>"$P"
done <<<"$units"

# bars: ratios at one size, then values without a baseline per unit; horizontal, so that a
# figure's name stays readable however long, the first figure on top
bars() { # FILE TITLE AXIS-LABEL WITH-THE-LINE-AT-1
	local f=$1 n top
	n=$(wc -l <"$f")
	# the line at 1 stays in sight beside bars shorter than it
	top=$(awk -v one="$4" '{ if ($NF + 0 > m) m = $NF + 0 } END {
		if (one == "yes" && m < 1) m = 1; print m * 1.15 }' "$f")
	panel $((130 + n * 30))
	{
		echo "set title $(gq "$2")"
		echo "set xlabel $(gq "$3")"
		echo "set xrange [0:$top]"
		echo "set yrange [$n - 0.4:-0.6]"
		echo "set ytics nomirror"
		echo "set key below"
		if [ "$4" = yes ]; then
			echo "set arrow from 1, graph 0 to 1, graph 1 nohead dt 2 lc 0"
			echo "plot $(gq "$f") using (\$2 / 2):0:(\$2 / 2):(0.3):ytic(1) with boxxyerror lc 1 title 'softrnic / baseline'"
		else
			echo "plot $(gq "$f") using (\$2 / 2):0:(\$2 / 2):(0.3):ytic(1) with boxxyerror lc 2 title 'softrnic'"
		fi
	} >>"$P"
}
awk -F'\t' '$1 == "ratio" && $7 != "-" { print "\"" $2 ($4 == "" ? "" : " " $4 " B") "\"", $7 }' \
	"$D/points" >"$D/ratio"
if [ -s "$D/ratio" ]; then
	bars "$D/ratio" "softrnic / baseline, figures at one size (median of the runs)" ratio yes
fi
vunits=$(awk -F'\t' '$1 == "value" { print $3 }' "$D/points" | awk '!seen[$0]++')
v=0
while IFS= read -r unit; do
	[ -n "$unit" ] || continue
	v=$((v + 1))
	awk -F'\t' -v u="$unit" '$1 == "value" && $3 == u {
		print "\"" $2 ($4 == "" ? "" : " " $4 " B") "\"", $5 }' "$D/points" >"$D/value.$v"
	bars "$D/value.$v" "$unit, no baseline (median of the runs)" "$unit" no
done <<<"$vunits"

[ "$panels" -gt 0 ] || die "$CSV: nothing to draw"
# the panels one above the other, each at its height, under the title
total=40
for i in $(seq "$panels"); do total=$((total + $(cat "$D/height.$i"))); done
{
	echo "set terminal pngcairo size 1000,$total font ',10' noenhanced"
	echo "set output $(gq "$PNG")"
	echo "set multiplot title $(gq "$bench ($stem): softrnic beside its baseline")"
	echo "set grid"
	echo "set style fill solid 0.6 border -1"
	top=$((total - 40))
	for i in $(seq "$panels"); do
		h=$(cat "$D/height.$i")
		top=$((top - h))
		echo "reset session"
		echo "set grid"
		echo "set style fill solid 0.6 border -1"
		echo "set origin 0,$(awk -v a="$top" -v t="$total" 'BEGIN { printf "%.5f", a / t }')"
		echo "set size 1,$(awk -v a="$h" -v t="$total" 'BEGIN { printf "%.5f", a / t }')"
		cat "$D/panel.$i"
	done
	echo "unset multiplot"
} >"$D/plot.gp"
gnuplot "$D/plot.gp" 2>"$D/err" || { cat "$D/err" >&2; die "gnuplot failed"; }
# gnuplot reports a bad data file as a warning and still writes a PNG
if grep -q -i 'warning\|error' "$D/err"; then cat "$D/err" >&2; die "gnuplot warned"; fi
[ -s "$PNG" ] || die "no $PNG"
