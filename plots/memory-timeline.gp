# Memory timeline of one strategy's step, stacked by category (parameters, gradients,
# optimizer states, activations, gathered parameters, gradient buckets, NCCL buffers,
# cuBLAS workspace, overhead, the optimizer step's temporaries), with the GPU's memory when
# given.
# input: the TSV of `parosim run --trace FILE.tsv`; strategy: which one; optional
# capacity: the GPU's memory in bytes (drawn as a dashed line); optional reserved: what the
# GPU holds with the caching allocator's reserve, in bytes (dotted; decision 94).
#   gnuplot -e "input='trace.tsv'; strategy='NII'; output='memory.png'" plots/memory-timeline.gp
load ARG0[1:strlen(ARG0)-strlen('memory-timeline.gp')].'common.gp'
if (!exists("input") || !exists("strategy")) {
    print "set input='trace.tsv' and strategy='NAME' with gnuplot -e"; exit status 2
}
set datafile nocolumnheaders
set datafile separator '\t'
set datafile commentschars '#'
categories = 'parameters gradients optimizer activations gathered buckets comm-buffers workspace overhead optimizer-temps'
colours = '#4477AA #EE6677 #228833 #CCBB44 #66CCEE #AA3377 #332288 #BBBBBB #999933 #882255'
memory(x) = strcol(1) eq 'memory' && strcol(2) eq strategy
# the sum of the first k categories (columns 4 ...), in GiB
stacked(k) = sum [c=4:3+k] column(c) / 2**30
set xlabel 'time in the step (s)'
set ylabel 'memory per GPU (GiB)'
set yrange [0:*]
set key outside right top vertical
set style fill solid 1.0 border
# Widest band first, each narrower one painted over it: a stack of step functions.
plot for [k=words(categories):1:-1] input using (memory(0) ? column(3) : NaN):(stacked(k)) \
         with fillsteps lc rgb word(colours, k) title word(categories, k), \
     (exists("capacity") ? capacity / 2**30 : NaN) with lines dt 2 lw 2 lc rgb '#CC3311' \
         title 'GPU memory', \
     (exists("reserved") ? reserved / 2**30 : NaN) with lines dt 3 lw 2 lc rgb '#222222' \
         title "with the allocator's reserve"
