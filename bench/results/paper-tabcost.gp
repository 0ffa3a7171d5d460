# What a statement on a per-file table costs. Regenerate the PNG: cd bench/results && gnuplot paper-tabcost.gp
set terminal png size 1200,600
set output 'paper-tabcost.png'
set style data histograms
set style fill solid 0.8 border -1
set key off
set ylabel 'microseconds'
set logscale y
set xtics rotate by -40 font ',8'
plot 'paper-tabcost.dat' using 2:xtic(1)
