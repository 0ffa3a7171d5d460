# Connectathon basic tests: time normalized to ganesha (1 = as fast).
# Regenerate the PNG: cd bench/results && gnuplot connectathon-async.gp
set terminal pngcairo size 900,500 noenhanced
set output 'connectathon-async.png'
set title 'Connectathon basic tests: time relative to ganesha (median of runs)'
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set boxwidth 0.9
set ylabel 'time / ganesha time'
set xlabel 'test'
set yrange [0:*]
set grid ytics
set key top left
set arrow from graph 0, first 1 to graph 1, first 1 nohead dt 2 lw 2
plot 'connectathon-async.dat' using 2:xtic(1) title 'ganesha', 'connectathon-async.dat' using 3:xtic(1) title 'pgnfs'
