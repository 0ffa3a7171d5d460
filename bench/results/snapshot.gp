# Snapshot creation time against the number of files. Regenerate the PNG: cd bench/results && gnuplot snapshot.gp
set terminal pngcairo size 900,500 noenhanced
set output 'snapshot.png'
set title 'pgnfs snapshot create: time against files in the file system'
set logscale x
set xlabel 'files'
set ylabel 'ms (psql \\timing)'
set yrange [0:*]
set grid
set key top left
plot 'snapshot.dat' using 1:2 with linespoints title 'with a snapshot present (median)', 'snapshot.dat' using 1:3 with linespoints title 'the first (enables the triggers)'
