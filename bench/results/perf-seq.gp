# Sequential I/O, 1024 MiB file. Regenerate the PNG: cd bench/results && gnuplot perf-seq.gp
set terminal pngcairo size 900,500 noenhanced
set output 'perf-seq.png'
set title 'Sequential I/O, 1024 MiB file'
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set boxwidth 0.9
set ylabel 'MB/s'
set grid ytics
set key top right
set yrange [0:*]
plot 'perf-seq.dat' using 2:xtic(1) title 'ganesha', 'perf-seq.dat' using 3:xtic(1) title 'pgnfs', 'perf-seq.dat' using 4:xtic(1) title 'pgnfs base', 'perf-seq.dat' using 5:xtic(1) title 'PG ceiling 1 conn', 'perf-seq.dat' using 6:xtic(1) title 'PG ceiling 4 conns'
