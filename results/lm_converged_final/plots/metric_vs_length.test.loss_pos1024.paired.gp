set terminal pngcairo size 1000,720 noenhanced
set output 'results/lm_converged_final/plots/metric_vs_length.test.loss_pos1024.paired.png'
set title 'test: loss by position in windows of 1024 tokens, paired differences'
set xlabel 'position in the window (the context a token sees)'
set ylabel 'difference of loss_pos1024 (nats; mean over seeds, band = 95% interval)'
set xrange [0:1024]
set arrow from graph 0, first 0 to graph 1, first 0 nohead lc rgb '#555555'
set arrow from 64, graph 0 to 64, graph 1 nohead dt 2 lc rgb '#555555'
set label 'past the training length (64) ->' at 64, graph 0.97 offset 0.5, 0 font ',9'
set grid
set key below font ',9' maxrows 5
plot 'results/lm_converged_final/plots/metric_vs_length.test.loss_pos1024.paired.0.dat' using 1:3:4 with filledcurves fc rgb '#1f77b4' fs transparent solid 0.15 notitle, '' using 1:2 with linespoints lc rgb '#1f77b4' lw 2 pt 7 ps 0.5 title '{type: t5, max_distance: 64} − {type: t5} (n=5)', 'results/lm_converged_final/plots/metric_vs_length.test.loss_pos1024.paired.1.dat' using 1:3:4 with filledcurves fc rgb '#d62728' fs transparent solid 0.15 notitle, '' using 1:2 with linespoints lc rgb '#d62728' lw 2 pt 7 ps 0.5 title '{type: kerple} − {type: alibi} (n=5)', 'results/lm_converged_final/plots/metric_vs_length.test.loss_pos1024.paired.2.dat' using 1:3:4 with filledcurves fc rgb '#2ca02c' fs transparent solid 0.15 notitle, '' using 1:2 with linespoints lc rgb '#2ca02c' lw 2 pt 7 ps 0.5 title '{type: fire, L_init: 16} − {type: alibi} (n=5)', 'results/lm_converged_final/plots/metric_vs_length.test.loss_pos1024.paired.3.dat' using 1:3:4 with filledcurves fc rgb '#ff7f0e' fs transparent solid 0.15 notitle, '' using 1:2 with linespoints lc rgb '#ff7f0e' lw 2 pt 7 ps 0.5 title '{type: rope, randomized: 1024} − {type: rope} (n=5)'
