set terminal pngcairo size 1000,720 noenhanced
set output 'results/lm_converged_long_context/plots/metric_vs_length.test.loss_pos1024.png'
set title 'test: loss by position in windows of 1024 tokens'
set xlabel 'position in the window (the context a token sees)'
set ylabel 'loss_pos1024 (mean ± sd over seeds)'
set xrange [0:1024]
set grid
set key below font ',9' maxrows 5
plot 'results/lm_converged_long_context/plots/metric_vs_length.test.loss_pos1024._type__rope_.dat' using 1:3:4 with filledcurves fc rgb '#1f77b4' fs transparent solid 0.12 notitle, '' using 1:2 with linespoints lc rgb '#1f77b4' lw 2 pt 7 ps 0.7 title '{type: rope}', 'results/lm_converged_long_context/plots/metric_vs_length.test.loss_pos1024._type__alibi_.dat' using 1:3:4 with filledcurves fc rgb '#d62728' fs transparent solid 0.12 notitle, '' using 1:2 with linespoints lc rgb '#d62728' lw 2 pt 7 ps 0.7 title '{type: alibi}'
