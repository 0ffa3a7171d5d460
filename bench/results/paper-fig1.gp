# Figure 1: storage layouts (single, inversion, hybrid, hybrid-1m). Regenerate the PNG: cd bench/results && gnuplot paper-fig1.gp
set terminal png size 1400,500
set output 'paper-fig1.png'
set style data histograms
set style fill solid 0.8 border -1
set logscale y
set ylabel 'seconds'
set key top left
set xtics rotate by -30
set multiplot layout 1,3
set title 'write all'
plot 'paper-fig1.dat' using 2:xtic(1) title 'single', 'paper-fig1.dat' using 5:xtic(1) title 'inversion', 'paper-fig1.dat' using 8:xtic(1) title 'hybrid', 'paper-fig1.dat' using 11:xtic(1) title 'hybrid-1m'
set title 'read one block of each'
plot 'paper-fig1.dat' using 3:xtic(1) title 'single', 'paper-fig1.dat' using 6:xtic(1) title 'inversion', 'paper-fig1.dat' using 9:xtic(1) title 'hybrid', 'paper-fig1.dat' using 12:xtic(1) title 'hybrid-1m'
set title 'remove all'
plot 'paper-fig1.dat' using 4:xtic(1) title 'single', 'paper-fig1.dat' using 7:xtic(1) title 'inversion', 'paper-fig1.dat' using 10:xtic(1) title 'hybrid', 'paper-fig1.dat' using 13:xtic(1) title 'hybrid-1m'
unset multiplot
