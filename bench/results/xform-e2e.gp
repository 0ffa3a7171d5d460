# xform-e2e.png (bench/xform/e2e): run in bench/results
set terminal pngcairo size 1000,1320 font ',10'
set output 'xform-e2e.png'
set multiplot layout 4,1
set key left top
set grid ytics
set style data histograms; set style histogram clustered; set style fill solid 0.6; set boxwidth 0.8; unset logscale; set xlabel ''; set yrange [0:*]; set title 'First access, cold chain cache (LOOKUP + GETATTR + READ 4 KiB)'; set ylabel 'us (median)'; plot '< grep ^open xform-e2e.dat' using 3:xtic(2) notitle
set style data linespoints; set style fill empty; set yrange [*:*]; set title 'Write and read against file size (64 KiB calls)'; set logscale xy; set xlabel 'bytes'; set ylabel 'ms (median)'; plot '< grep ^size xform-e2e.dat' using 2:($3*1e3) title 'write unguarded', '' using 2:($4*1e3) title 'write identity', '' using 2:($5*1e3) title 'read unguarded', '' using 2:($6*1e3) title 'read identity'; unset logscale
set style data linespoints; set style fill empty; set yrange [*:*]; set title 'N increments: server chain against a client pipeline'; set xlabel 'N'; set ylabel 's (median)'; set yrange [0:*]; plot '< grep ^pipes xform-e2e.dat' using 2:3 title 'server chain', '' using 2:4 title 'pipeline', '' using 2:5 title 'unguarded read' with lines
set style data histograms; set style histogram clustered; set style fill solid 0.6; set boxwidth 0.8; unset logscale; set xlabel ''; set yrange [0:*]; set title 'Real transforms, text corpus'; set ylabel 'MB/s (median)'; plot '< grep "^real text" xform-e2e.dat' using 4:xtic(3) title 'write', '' using 5 title 'read'
unset multiplot
