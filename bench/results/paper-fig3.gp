# Figure 3: Connectathon basic tests per cache combination, relative to nfs-ganesha. Regenerate the PNG: cd bench/results && gnuplot paper-fig3.gp
set terminal png size 1300,550 noenhanced
set output 'paper-fig3.png'
set title 'Connectathon basic tests per cache combination: time relative to ganesha (median of 3 runs)'
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set boxwidth 0.9
set ylabel 'time / ganesha time'
set yrange [0:*]
set grid ytics
set key top left
set xtics rotate by -30
set arrow from graph 0, first 1 to graph 1, first 1 nohead dt 2 lw 2
plot 'paper-fig3.dat' using 2:xtic(1) title 'pgnfs none', 'paper-fig3.dat' using 3:xtic(1) title 'pgnfs SC', 'paper-fig3.dat' using 4:xtic(1) title 'pgnfs SC+NC', 'paper-fig3.dat' using 5:xtic(1) title 'pgnfs BC+SC+NC'
