# Step Gantt chart: the tasks of one strategy's simulated step on its streams (compute,
# intra-group and inter-group communication; a global collective spans both), coloured
# by task, so overlap and exposed communication can be seen.
# input: the TSV of `parosim run --trace FILE.tsv`; strategy: which one (the trace may
# hold several); optional tmin, tmax: a time window in seconds.
#   gnuplot -e "input='trace.tsv'; strategy='NII'; output='gantt.png'" plots/gantt.gp
load ARG0[1:strlen(ARG0)-strlen('gantt.gp')].'common.gp'
if (!exists("input") || !exists("strategy")) {
    print "set input='trace.tsv' and strategy='NAME' with gnuplot -e"; exit status 2
}
set datafile nocolumnheaders
set datafile separator '\t'
set datafile commentschars '#'
task(x) = strcol(1) eq 'task' && strcol(2) eq strategy
# stream -> rows: compute 3, intra 2, inter 1; global fills intra and inter
y_low(s) = s eq 'compute' ? 2.6 : s eq 'intra' ? 1.6 : 0.6
y_high(s) = s eq 'compute' ? 3.4 : s eq 'inter' ? 1.4 : 2.4
names = 'forward backward optimizer allgather reducescatter allreduce broadcast sendrecv'
colours = '#4477AA #66CCEE #228833 #EE6677 #CCBB44 #AA3377 #BBBBBB #332288'
index_of(s) = sum [k=1:words(names)] (word(names, k) eq s ? k : 0)
rgb(s) = index_of(s) ? int('0x'.word(colours, index_of(s))[2:]) : 0x000000
if (exists("tmin")) set xrange [tmin:*]
if (exists("tmax")) set xrange [*:tmax]
set yrange [0.3:3.7]
set ytics ('compute' 3, 'intra-group' 2, 'inter-group' 1) scale 0
set grid xtics noytics
set xlabel 'time in the step (s)'
set key outside top center horizontal
set style fill solid 1.0 border
plot input using (task(0) ? (column(7) + column(8)) / 2 : NaN):((y_low(strcol(3)) + y_high(strcol(3))) / 2): \
         ((column(8) - column(7)) / 2):((y_high(strcol(3)) - y_low(strcol(3))) / 2):(rgb(strcol(4))) \
         with boxxyerror lc rgb variable notitle, \
     for [k=1:words(names)] NaN with boxes fs solid lc rgb word(colours, k) title word(names, k)
