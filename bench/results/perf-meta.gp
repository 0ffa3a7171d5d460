# Metadata operations, 10000-entry directory. Regenerate the PNG: cd bench/results && gnuplot perf-meta.gp
set terminal pngcairo size 900,500 noenhanced
set output 'perf-meta.png'
set title 'Metadata operations, 10000-entry directory'
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set boxwidth 0.9
set ylabel 'operations/s'
set grid ytics
set key top right
set logscale y
plot 'perf-meta.dat' using 2:xtic(1) title 'ganesha', 'perf-meta.dat' using 3:xtic(1) title 'pgnfs', 'perf-meta.dat' using 4:xtic(1) title 'pgnfs async', 'perf-meta.dat' using 5:xtic(1) title 'pgnfs base'
