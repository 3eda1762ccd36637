set terminal pngcairo size 1000,720 noenhanced
set output 'results/lm_converged_long_context/plots/metric_vs_length.test.ppl_sliding.png'
set title 'test.ppl_sliding'
set xlabel 'length (log scale)'
set ylabel 'ppl_sliding (mean ± sd over seeds)'
set logscale x 2
set logscale y
set autoscale yfix
set offsets 0, 0, graph 0.05, graph 0.05
set ytics (10, 20, 50, 60, 70, 80, 90, 100, 110, 120, 140, 160, 180, 200, 250, 300, 400, 500, 700, 1000, 2000, 5000, 10000)
set grid
set key below font ',9' maxrows 5
plot 'results/lm_converged_long_context/plots/metric_vs_length.test.ppl_sliding._type__rope_.dat' using 1:3:4 with filledcurves fc rgb '#1f77b4' fs transparent solid 0.12 notitle, '' using 1:2 with linespoints lc rgb '#1f77b4' lw 2 pt 7 ps 0.7 title '{type: rope}', 'results/lm_converged_long_context/plots/metric_vs_length.test.ppl_sliding._type__alibi_.dat' using 1:3:4 with filledcurves fc rgb '#d62728' fs transparent solid 0.12 notitle, '' using 1:2 with linespoints lc rgb '#d62728' lw 2 pt 7 ps 0.7 title '{type: alibi}'
