# Figure 2: copy in and remove, 20 times. Regenerate the PNG: cd bench/results && gnuplot paper-fig2.gp
set terminal png size 1300,500
set output 'paper-fig2.png'
set key top left
set xlabel 'iteration'
set multiplot layout 1,2
set title 'time to copy 3.6 MB in'
set ylabel 'seconds'
set yrange [0:*]
plot 'paper-fig2.dat' using 1:2 with linespoints title 'single no-autovacuum', 'paper-fig2.dat' using 1:4 with linespoints title 'single vacuum-each', 'paper-fig2.dat' using 1:6 with linespoints title 'single shipped', 'paper-fig2.dat' using 1:8 with linespoints title 'inversion no-autovacuum', 'paper-fig2.dat' using 1:10 with linespoints title 'inversion vacuum-each', 'paper-fig2.dat' using 1:12 with linespoints title 'inversion shipped'
set title 'size of the data tables'
set ylabel 'MB'
plot 'paper-fig2.dat' using 1:3 with linespoints title 'single no-autovacuum', 'paper-fig2.dat' using 1:5 with linespoints title 'single vacuum-each', 'paper-fig2.dat' using 1:7 with linespoints title 'single shipped', 'paper-fig2.dat' using 1:9 with linespoints title 'inversion no-autovacuum', 'paper-fig2.dat' using 1:11 with linespoints title 'inversion vacuum-each', 'paper-fig2.dat' using 1:13 with linespoints title 'inversion shipped'
unset multiplot
