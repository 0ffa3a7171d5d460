# Connectathon lock tests and lock figures: pgnfs and nfs-ganesha through the Linux NFS client.
# Regenerate the PNG: cd bench/results && gnuplot connectathon-lock.gp
set terminal pngcairo size 1200,520 noenhanced
set output 'connectathon-lock.png'
set datafile missing 'NaN'
set multiplot
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set boxwidth 0.9
set grid ytics
set tmargin 3
set size 0.56,1
set origin 0,0
set title "Connectathon lock tests, Linux NFS client:\nseconds per test, median of 1 round(s), log scale"
set logscale y
set ylabel 'seconds'
set xlabel 'test'
set key top left
plot 'connectathon-lock.dat' index 0 using 2:xtic(1) title 'pgnfs one', 'connectathon-lock.dat' index 0 using 3:xtic(1) title 'pgnfs two', 'connectathon-lock.dat' index 0 using 4:xtic(1) title 'ganesha one', 'connectathon-lock.dat' index 0 using 5:xtic(1) title 'ganesha two'
unset logscale y
set yrange [0:*]
set xlabel ''
unset key
set xtics rotate by -35
set size 0.22,1
set origin 0.56,0
set title "lock+unlock pairs/s,\none client"
set ylabel "pairs/s"
plot 'connectathon-lock.dat' index 1 using 2:xtic(1) lc 3
set size 0.22,1
set origin 0.78,0
set title "unlock to grant of\na blocked lock"
set ylabel "seconds"
plot 'connectathon-lock.dat' index 1 using 3:xtic(1) lc 4
unset multiplot
