# SPDX-License-Identifier: MIT
# Measured against predicted times from `parosim validate ... --csv FILE`, log-log, with
# the y = x line: points above it are over-predicted. One colour per kind (coll, gemm, hbm).
# input: that CSV (source,kind,op,scope,ranks,bytes,measured_us,predicted_us,error).
#   gnuplot -e "input='validate.csv'; output='validate.png'" plots/validate.gp
load ARG0[1:strlen(ARG0)-strlen('validate.gp')].'common.gp'
if (!exists("input")) { print "set input='validate.csv' with gnuplot -e"; exit status 2 }
if (strlen(title) == 0) set title 'parosim validate: predicted against measured' font ',13'
set datafile separator ','
set logscale xy
set xlabel 'measured time (us)'
set ylabel 'predicted time (us)'
set key top left
set grid xtics ytics lc rgb '#dddddd'
kind_is(k) = strcol("kind") eq k
plot x title 'y = x' with lines dashtype 2 lc rgb '#808080', \
     input using (column("measured_us")):(kind_is('coll') ? column("predicted_us") : NaN) \
         title 'collective' with points pt 7 ps 0.9 lc rgb colour(0), \
     '' using (column("measured_us")):(kind_is('gemm') ? column("predicted_us") : NaN) \
         title 'GEMM' with points pt 5 ps 0.9 lc rgb colour(1), \
     '' using (column("measured_us")):(kind_is('hbm') ? column("predicted_us") : NaN) \
         title 'HBM' with points pt 9 ps 0.9 lc rgb colour(2)
