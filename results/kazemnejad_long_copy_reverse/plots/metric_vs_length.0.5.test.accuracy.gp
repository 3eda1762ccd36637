set terminal pngcairo size 1000,720 noenhanced
set output 'results/kazemnejad_long_copy_reverse/plots/metric_vs_length.0.5.test.accuracy.png'
set title 'test.accuracy — 0.5 (lengths below 21 from the other splits)'
set xlabel 'length'
set ylabel 'accuracy (mean ± sd over seeds)'
set yrange [-2:102]
set arrow from 20.5, graph 0 to 20.5, graph 1 nohead dt 2 lc rgb '#555555'
set label 'test ->' at 20.5, graph 0.97 offset 0.5, 0 font ',9'
set grid
set key below font ',9' maxrows 5
plot 'results/kazemnejad_long_copy_reverse/plots/metric_vs_length.0.5.test.accuracy.reverse_____type__t5_.dat' using 1:3:4 with filledcurves fc rgb '#1f77b4' fs transparent solid 0.12 notitle, '' using 1:2 with linespoints lc rgb '#1f77b4' lw 2 pt 7 ps 0.7 title 'reverse · {type: t5}', 'results/kazemnejad_long_copy_reverse/plots/metric_vs_length.0.5.test.accuracy.reverse_____type__alibi_.dat' using 1:3:4 with filledcurves fc rgb '#d62728' fs transparent solid 0.12 notitle, '' using 1:2 with linespoints lc rgb '#d62728' lw 2 pt 7 ps 0.7 title 'reverse · {type: alibi}', 'results/kazemnejad_long_copy_reverse/plots/metric_vs_length.0.5.test.accuracy.reverse_____type__rope_.dat' using 1:3:4 with filledcurves fc rgb '#2ca02c' fs transparent solid 0.12 notitle, '' using 1:2 with linespoints lc rgb '#2ca02c' lw 2 pt 7 ps 0.7 title 'reverse · {type: rope}', 'results/kazemnejad_long_copy_reverse/plots/metric_vs_length.0.5.test.accuracy.reverse_____type__sinusoidal_.dat' using 1:3:4 with filledcurves fc rgb '#ff7f0e' fs transparent solid 0.12 notitle, '' using 1:2 with linespoints lc rgb '#ff7f0e' lw 2 pt 7 ps 0.7 title 'reverse · {type: sinusoidal}'
