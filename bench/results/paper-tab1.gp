# Table 1: base64 against binary. Regenerate the PNG: cd bench/results && gnuplot paper-tab1.gp
set terminal png size 1300,450
set output 'paper-tab1.png'
set style data histograms
set style fill solid 0.8 border -1
set key off
set multiplot layout 1,3
set title 'microseconds per 8 KiB'
set yrange [0:*]
plot 'paper-tab1.dat' using 2:xtic(1), '' using 3
set title 'bytes to PostgreSQL per 8 KiB write'
plot 'paper-tab1.dat' using 4:xtic(1)
set title 'bytes on disk per 8 KiB'
plot 'paper-tab1.dat' using 6:xtic(1)
unset multiplot
