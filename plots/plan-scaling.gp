# Plan scaling: the time to train (days, top) and the GPU-hours it takes (bottom) against
# the number of GPUs, a line per strategy through its best plan at each cluster size (the
# fastest row that fits with the memory headroom), the best of all circled and named.
# A point more than plan's window (5%) behind the best at its GPU count is only an upper
# bound of that strategy's best: plan stopped searching its slower configurations there;
# a grey triangle pointing down marks it.
# input: the TSV that `parosim plot plan-scaling PLANS.csv --data FILE` derives from
# `parosim plan --top 0 --format csv` outputs concatenated: "gpus strategy_index strategy
# days gpu_hours exact layout", one block per strategy (index k-1 for the k-th name of
# strategies), then a block of the best at each GPU count; strategies: the names
# (space-separated); aliases (optional): each one's alias for the key, '-' for none.
#   gnuplot -e "input='plans.tsv'; strategies='NNG NNI'; output='plans.png'" plots/plan-scaling.gp
if (!exists("height")) height = 800
load ARG0[1:strlen(ARG0)-strlen('plan-scaling.gp')].'common.gp'
if (!exists("input") || !exists("strategies")) {
    print "set input='plans.tsv' and strategies='A B ...' with gnuplot -e"; exit status 2
}
set datafile nocolumnheaders
set datafile separator '\t'
set datafile commentschars '#'
n = words(strategies)
if (!exists("aliases")) aliases = ''
# many strategies take two columns of the key: names alone then
wide = n >= 14
key_title(k) = word(strategies, k) . (wide || word(aliases, k) eq '' || \
    word(aliases, k) eq '-' ? '' : ' ('.word(aliases, k).')')
# x: the GPU counts, a little room either side
stats input using 1 nooutput
set xrange [STATS_min/1.3:STATS_max*1.3]
set logscale x 2
set format x '%g'
set xlabel 'GPUs'
set logscale y
# y: the points' range, with room above for the best's labels
set autoscale yfix
set offsets 0, 0, graph 0.15, graph 0.05
set grid xtics ytics lc rgb '#dddddd' lt 1
# both panels share their margins, so that their x axes line up; the key sits right of them,
# in two columns when the strategies are many (a plan lists 29)
set lmargin at screen 0.09
set rmargin at screen (wide ? 0.67 : 0.80)
unset title
set multiplot layout 2,1 title title font ',13'
set key at screen (wide ? 0.685 : 0.81), screen 0.93 left top vertical Left reverse samplen 1.5 \
    spacing 1 font ',9' maxrows (wide ? int((n + 3) / 2) : n + 2)
# log y over a narrow range shows no decade: tics at 1, 2 and 5 of each decade it spans
log_tics(lo, hi) = sprintf('set ytics (%s)', tic_list(floor(log10(lo)), ceil(log10(hi))))
tic_list(a, b) = a > b ? '' : sprintf('%g, %g, %g%s', 10**a, 2*10**a, 5*10**a, \
                                      a < b ? ', '.tic_list(a + 1, b) : '')
stats input using 4 nooutput
eval log_tics(STATS_min, STATS_max)
set ylabel 'time to train (days)'
plot for [k=0:n-1] input index k using 1:4 with linespoints lw 2 pt point_type(k) ps 1.2 \
         lc rgb colour(k) title key_title(k+1), \
     input index 0:n-1 using 1:(column(6) > 0 ? NaN : column(4)) with points pt 10 ps 1.8 \
         lc rgb '#888888' title 'at most (pruned)', \
     input index n using 1:4 with points pt 6 ps 3 lw 2 lc rgb '#222222' title 'best', \
     input index n using 1:4:3 with labels offset 0, 1.6 font ',9' tc rgb '#222222' notitle
unset key
stats input using 5 nooutput
eval log_tics(STATS_min, STATS_max)
set ylabel 'GPU-hours to train'
plot for [k=0:n-1] input index k using 1:5 with linespoints lw 2 pt point_type(k) ps 1.2 \
         lc rgb colour(k) notitle, \
     input index 0:n-1 using 1:(column(6) > 0 ? NaN : column(5)) with points pt 10 ps 1.8 \
         lc rgb '#888888' notitle, \
     input index n using 1:5 with points pt 6 ps 3 lw 2 lc rgb '#222222' notitle, \
     input index n using 1:5:3 with labels offset 0, 1.6 font ',9' tc rgb '#222222' notitle
unset multiplot
