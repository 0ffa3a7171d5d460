# Figure 4: chunk size x client write size. Regenerate the PNG: cd bench/results && gnuplot paper-fig4.gp
set terminal png size 1300,500
set output 'paper-fig4.png'
set logscale x 2
set xlabel 'client write (read) size, bytes'
set ylabel 'MB/s'
set key top left
set multiplot layout 1,2
set title 'write'
plot 'paper-fig4.dat' using 2:($1==1024?$3:1/0) with linespoints title 'chunk 1K', 'paper-fig4.dat' using 2:($1==4096?$3:1/0) with linespoints title 'chunk 4K', 'paper-fig4.dat' using 2:($1==8192?$3:1/0) with linespoints title 'chunk 8K', 'paper-fig4.dat' using 2:($1==16384?$3:1/0) with linespoints title 'chunk 16K', 'paper-fig4.dat' using 2:($1==32768?$3:1/0) with linespoints title 'chunk 32K', 'paper-fig4.dat' using 2:($1==65536?$3:1/0) with linespoints title 'chunk 64K', 'paper-fig4.dat' using 2:($1==131072?$3:1/0) with linespoints title 'chunk 128K', 'paper-fig4.dat' using 2:($1==262144?$3:1/0) with linespoints title 'chunk 256K', 'paper-fig4.dat' using 2:($1==1048576?$3:1/0) with linespoints title 'chunk 1M'
set title 'read'
plot 'paper-fig4.dat' using 2:($1==1024?$4:1/0) with linespoints title 'chunk 1K', 'paper-fig4.dat' using 2:($1==4096?$4:1/0) with linespoints title 'chunk 4K', 'paper-fig4.dat' using 2:($1==8192?$4:1/0) with linespoints title 'chunk 8K', 'paper-fig4.dat' using 2:($1==16384?$4:1/0) with linespoints title 'chunk 16K', 'paper-fig4.dat' using 2:($1==32768?$4:1/0) with linespoints title 'chunk 32K', 'paper-fig4.dat' using 2:($1==65536?$4:1/0) with linespoints title 'chunk 64K', 'paper-fig4.dat' using 2:($1==131072?$4:1/0) with linespoints title 'chunk 128K', 'paper-fig4.dat' using 2:($1==262144?$4:1/0) with linespoints title 'chunk 256K', 'paper-fig4.dat' using 2:($1==1048576?$4:1/0) with linespoints title 'chunk 1M'
unset multiplot
