# Web proxy cache (Hummingbird Table 4), relative to ganesha. Regenerate the PNG: cd bench/results && gnuplot perf-proxy.gp
set terminal pngcairo size 900,500 noenhanced
set output 'perf-proxy.png'
set title 'Web proxy cache (Hummingbird Table 4), relative to ganesha'
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set boxwidth 0.9
set ylabel 'value relative to ganesha (log scale)'
set grid ytics
set key top right
set logscale y
plot 'perf-proxy.dat' using 2:xtic(1) title 'ganesha', 'perf-proxy.dat' using 3:xtic(1) title 'pgnfs', 'perf-proxy.dat' using 4:xtic(1) title 'pgnfs async', 'perf-proxy.dat' using 5:xtic(1) title 'pgnfs base-async'
