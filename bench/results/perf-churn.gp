# Small-file churn. Regenerate the PNG: cd bench/results && gnuplot perf-churn.gp
set terminal pngcairo size 900,500 noenhanced
set output 'perf-churn.png'
set title 'Small-file churn'
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set boxwidth 0.9
set ylabel 'files/s'
set grid ytics
set key top right
set yrange [0:*]
plot 'perf-churn.dat' using 2:xtic(1) title 'ganesha', 'perf-churn.dat' using 3:xtic(1) title 'pgnfs', 'perf-churn.dat' using 4:xtic(1) title 'pgnfs async'
