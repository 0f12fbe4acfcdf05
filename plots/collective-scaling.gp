# Collective scaling (the PaRO paper's Figure 4 form): bus bandwidth (or time) of one
# collective against the number of GPUs, a line per algorithm (ring, hierarchical, ho-ring).
# input: a CSV with the columns of `parosim collective --format csv` preceded by
# algorithm,gpus (scripts/gallery.sh assembles one); algorithms: the names to draw
# (space-separated); metric: busbw (default) or time.
#   gnuplot -e "input='coll.csv'; algorithms='ring ho-ring'; output='coll.png'" plots/collective-scaling.gp
load ARG0[1:strlen(ARG0)-strlen('collective-scaling.gp')].'common.gp'
if (!exists("input") || !exists("algorithms")) {
    print "set input='coll.csv' and algorithms='ring ...' with gnuplot -e"; exit status 2
}
if (!exists("metric")) metric = 'busbw'
set datafile separator ','
set logscale x 2
set xlabel 'GPUs'
if (metric eq 'time') {
    set ylabel 'time (ms)'; set logscale y
} else {
    set ylabel 'bus bandwidth (GB/s)'; set yrange [0:*]
}
y_of(x) = metric eq 'time' ? column("time_us") / 1000 : column("busbw_GBps")
set key top right
# Each algorithm's rows into a datablock of their own, so its line joins them.
do for [k=1:words(algorithms)] {
    stats input using (strcol("algorithm") eq word(algorithms, k) ? 1 : 0) nooutput
    if (STATS_sum == 0) { print 'no rows for algorithm '.word(algorithms, k); exit status 1 }
    eval sprintf('set table $line%d', k)
    plot input using (column("gpus")):(y_of(0)) with table if (strcol("algorithm") eq word(algorithms, k))
    unset table
}
set datafile nocolumnheaders
set datafile separator whitespace
plot for [k=1:words(algorithms)] sprintf('$line%d', k) using 1:2 \
         with linespoints lw 2 pt point_type(k-1) lc rgb colour(k-1) title word(algorithms, k)
