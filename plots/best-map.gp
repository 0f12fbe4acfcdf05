# Best-strategy map: over two swept axes, each cell coloured by the strategy with the
# fastest step among those that fit, labelled with it and its margin over the runner-up
# (how much slower the second best is). Cells where nothing fits say OOM.
# input: the TSV that `parosim plot best-map SWEEP.csv --data FILE` derives from a sweep:
#   x_index y_index winner_index margin x_value y_value winner
# winners: the winners' names in winner_index order (space-separated); xlabel, ylabel.
#   gnuplot -e "input='map.tsv'; winners='NII IIG'; output='map.png'" plots/best-map.gp
load ARG0[1:strlen(ARG0)-strlen('best-map.gp')].'common.gp'
if (!exists("input") || !exists("winners")) {
    print "set input='map.tsv' and winners='A B ...' with gnuplot -e"; exit status 2
}
if (!exists("xlabel")) xlabel = 'x'
if (!exists("ylabel")) ylabel = 'y'
set datafile nocolumnheaders
set datafile separator '\t'
set datafile commentschars '#'
n = words(winners)
# one discrete colour per winner; OOM cells (index -1) grey
palette = "-1.5 '#FFFFFF', -0.5 '#FFFFFF', -0.5 '#DDDDDD', 0 '#DDDDDD'"
set palette maxcolors n + 1
spec = "-1 '#DDDDDD'"
do for [k=1:n] { spec = spec.sprintf(", %d '%s'", k-1, colour(k-1)) }
eval "set palette defined (".spec.")"
set cbrange [-1.5:n-0.5]
set cbtics ('OOM' -1) scale 0
do for [k=1:n] { set cbtics add (word(winners, k) k-1) }
set xlabel xlabel
set ylabel ylabel
set grid noytics
set tics scale 0
set offsets 0, 0, 0, 0
stats input using 1:2 nooutput
set xrange [STATS_min_x-0.5:STATS_max_x+0.5]
set yrange [STATS_min_y-0.5:STATS_max_y+0.5]
# a file swapped in by the sweep (model=models/llama-7b.yaml) is named by its stem; any
# other value is printed whole ('25 Gb/s' and '1/64' have slashes but are no paths)
basename(s) = strstrt(s, '/') ? basename(s[strstrt(s, '/')+1:]) : s
stem(s) = strstrt(s, '.yaml') ? s[1:strstrt(s, '.yaml')-1] : strstrt(s, '.json') ? s[1:strstrt(s, '.json')-1] : s
is_file(s) = strstrt(s, '.yaml') || strstrt(s, '.json')
tic(s) = is_file(s) ? stem(basename(s)) : s
cell_label(w, m) = w eq 'OOM' ? 'OOM' : (m == m ? sprintf("%s\n+%.1f%%", w, 100*m) : w)
plot input using 1:2:3 with image notitle, \
     '' using 1:2:(cell_label(strcol(7), column(4))):xtic(tic(strcol(5))):ytic(tic(strcol(6))) with labels font ',9' notitle
