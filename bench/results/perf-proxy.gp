# Web proxy cache workload. Regenerate the PNG: cd bench/results && gnuplot perf-proxy.gp
set terminal pngcairo size 900,500 noenhanced
set output 'perf-proxy.png'
set title 'Web proxy cache workload'
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set boxwidth 0.9
set ylabel 'objects/s'
set grid ytics
set key top right
set yrange [0:*]
plot 'perf-proxy.dat' using 2:xtic(1) title 'ganesha', 'perf-proxy.dat' using 3:xtic(1) title 'pgnfs'
