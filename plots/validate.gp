# SPDX-License-Identifier: MIT
# Measured against predicted times from `parosim validate ... --csv FILE`, log-log, with
# the y = x line: points above it are over-predicted. One colour per kind (coll, gemm, hbm).
# usage: gnuplot -e "input='validate.csv'; output='validate.png'" plots/validate.gp
if (!exists("input")) input = 'validate.csv'
if (!exists("output")) output = 'validate.png'
set terminal pngcairo size 900,700 enhanced font ',11'
set output output
set datafile separator ','
set logscale xy
set xlabel 'measured time (us)'
set ylabel 'predicted time (us)'
set title 'parosim validate: predicted against measured'
set key top left
set grid
# columns: source,kind,op,scope,ranks,bytes,measured_us,predicted_us,error
plot x title 'y = x' with lines dashtype 2 lc rgb '#808080', \
     input every ::1 using 7:(strcol(2) eq 'coll' ? $8 : 1/0) title 'collective' with points pt 7 ps 0.8, \
     input every ::1 using 7:(strcol(2) eq 'gemm' ? $8 : 1/0) title 'GEMM' with points pt 5 ps 0.8, \
     input every ::1 using 7:(strcol(2) eq 'hbm' ? $8 : 1/0) title 'HBM' with points pt 9 ps 0.8
