# Several frontends on one database (churn: files/s), ops/s. Regenerate the PNG: cd bench/results && gnuplot frontends.gp
set terminal pngcairo size 900,500 noenhanced
set output 'frontends.png'
set title 'Several frontends on one database (churn: files/s), ops/s'
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set boxwidth 0.9
set ylabel 'per second (log)'
set logscale y
set grid ytics
set key outside right
plot 'frontends.dat' using 2:xtic(1) title 'churn', 'frontends.dat' using 3:xtic(1) title 'getattr', 'frontends.dat' using 4:xtic(1) title 'lookup', 'frontends.dat' using 5:xtic(1) title 'setattr', 'frontends.dat' using 6:xtic(1) title 'rename'
