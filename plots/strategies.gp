# Strategy bars (the PaRO paper's Figure 3 form): throughput of each strategy as a bar,
# its peak memory per GPU as a point on the right axis, the GPU's memory as a dashed
# line; strategies that do not fit are drawn hatched and crossed at their bar's top.
# input: the CSV of `parosim run --format csv` (rank order).
#   gnuplot -e "input='run.csv'; output='strategies.png'" plots/strategies.gp
load ARG0[1:strlen(ARG0)-strlen('strategies.gp')].'common.gp'
if (!exists("input")) { print "set input='run.csv' with gnuplot -e"; exit status 2 }
set datafile separator ','
stats input using (column("mem_capacity")/2**30):(column("mem_peak")/2**30) nooutput
capacity = STATS_max_x
# The memory axis stops at 3x the GPU's memory, so that a 1 TB DDP peak does not squash
# the strategies that fit into the bottom of the plot; peaks above it are drawn on the
# top edge as triangles with their value written.
mem_clip = 3 * capacity
mem_top = (STATS_max_y > capacity ? (STATS_max_y < mem_clip ? STATS_max_y : mem_clip) : capacity) * 1.15
above(g) = g > mem_top / 1.15 + 1e-9
stats input using (column("samples_per_s")) nooutput
set yrange [0:STATS_max * 1.15]
set y2range [0:mem_top]
set ylabel 'throughput (samples/s)'
set y2label 'peak memory per GPU (GiB)' textcolor rgb '#CC3311'
set ytics nomirror
set y2tics textcolor rgb '#CC3311'
set xtics rotate by -50 left nomirror scale 0 font ',9'
set xrange [-0.7:*]
set boxwidth 0.7
set key outside top center horizontal
fits(x) = strcol("fits") eq "true"
# "NGG (zero-2)": the strategy and its first alias
first_alias(a) = strstrt(a, ';') ? a[1:strstrt(a, ';')-1] : a
# hover=1 (an SVG in the HTML report): each bar's exact figures under an invisible point
hover_text(x) = sprintf("%s: step %.3f s (compute %.3f, exposed comm %.3f), %.1f samples/s, peak %.1f GiB (allocated %.1f, reserved %.1f)%s", \
    strcol("name"), column("time_step"), column("time_compute"), column("time_exposed_comm"), \
    column("samples_per_s"), column("mem_peak")/2**30, column("mem_allocated")/2**30, \
    column("mem_reserved")/2**30, fits(0) ? "" : ", out of memory")
# what the GPU holds with the caching allocator's reserve: reserved + NCCL's buffers and the
# overhead, outside the allocator (decision 94); the peak's outside part is the same
held(x) = (column("mem_reserved") + column("mem_comm_buffers") + column("mem_overhead"))/2**30
label(x) = strlen(strcol("aliases")) ? strcol("name").' ('.first_alias(strcol("aliases")).')' : strcol("name")
plot input using 0:(fits(0) ? column("samples_per_s") : 0):xtic(label(0)) \
         with boxes fs solid 0.85 noborder lc rgb '#4477AA' title 'throughput', \
     '' using 0:(fits(0) ? NaN : column("samples_per_s")) \
         with boxes fs pattern 2 border lc rgb '#999999' lc rgb '#999999' title 'would-be throughput: out of memory', \
     '' using 0:(fits(0) ? NaN : column("samples_per_s")) with points pt 2 ps 2 lw 2 lc rgb '#000000' notitle, \
     '' using 0:(above(column("mem_peak")/2**30) ? NaN : column("mem_peak")/2**30) axes x1y2 \
         with points pt 7 ps 1.2 lc rgb '#CC3311' title 'peak memory', \
     '' using 0:(held(0) > mem_top / 1.15 + 1e-9 ? NaN : held(0)) axes x1y2 \
         with points pt 6 ps 1.2 lc rgb '#CC3311' title "with the allocator's reserve", \
     '' using 0:(above(column("mem_peak")/2**30) ? mem_top / 1.15 : NaN) axes x1y2 \
         with points pt 9 ps 1.4 lc rgb '#CC3311' notitle, \
     '' using 0:(above(column("mem_peak")/2**30) ? mem_top / 1.15 : NaN):(sprintf("%.0f", column("mem_peak")/2**30)) \
         axes x1y2 with labels offset 0, 0.9 font ',7' tc rgb '#CC3311' notitle, \
     capacity axes x1y2 with lines dt 2 lw 2 lc rgb '#CC3311' title sprintf('GPU memory (%.0f GiB)', capacity), \
     '' using 0:(hover ? column("samples_per_s") : NaN):(hover_text(0)) \
         with labels hypertext point pt 7 ps 3 lc rgb '#FFFFFFFF' notitle
