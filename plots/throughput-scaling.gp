# Throughput scaling (the PaRO paper's Figure 5 form): training throughput against the
# number of GPUs, a line per strategy; points where a strategy does not fit are left out.
# input: the CSV of `parosim sweep` over an axis that changes the GPU count (its gpus
# column); strategies: the names to draw (space-separated); metric: samples_per_s
# (default), tokens_per_s or tflops_per_gpu.
#   gnuplot -e "input='sweep.csv'; strategies='NII zero-3'; output='scaling.png'" plots/throughput-scaling.gp
load ARG0[1:strlen(ARG0)-strlen('throughput-scaling.gp')].'common.gp'
if (!exists("input") || !exists("strategies")) {
    print "set input='sweep.csv' and strategies='A B ...' with gnuplot -e"; exit status 2
}
if (!exists("metric")) metric = 'samples_per_s'
set datafile separator ','
set logscale x 2
set xlabel 'GPUs'
set ylabel metric eq 'samples_per_s' ? 'throughput (samples/s)' : \
           metric eq 'tokens_per_s' ? 'throughput (tokens/s)' : 'TFLOP/s per GPU'
# log-log: ideal (linear) scaling is a straight line of slope 1
set logscale y
set key outside right top vertical
# a strategy matches by its name or any of its aliases ("NGG" or "zero-2")
is(s) = strcol("name") eq s || strstrt(';'.strcol("aliases").';', ';'.s.';') > 0
# Each strategy's fitting points into a datablock of their own, so its line joins them.
do for [k=1:words(strategies)] {
    stats input using (is(word(strategies, k)) ? 1 : 0) nooutput
    if (STATS_sum == 0) { print 'no rows for strategy '.word(strategies, k); exit status 1 }
    eval sprintf('set table $line%d', k)
    plot input using (column("gpus")):(strcol("fits") eq "true" ? column(metric) : NaN) \
         with table if (is(word(strategies, k)))
    unset table
}
set datafile nocolumnheaders
set datafile separator whitespace
plot for [k=1:words(strategies)] sprintf('$line%d', k) using 1:2 \
         with linespoints lw 2 pt point_type(k-1) lc rgb colour(k-1) title word(strategies, k)
