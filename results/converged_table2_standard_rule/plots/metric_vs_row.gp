set terminal pngcairo size 800,550 noenhanced
set output 'results/converged_table2_standard_rule/plots/metric_vs_row.png'
set title 'Table 2 at convergence: clipping distance k'
set xlabel 'model.position.k (log scale)'
set ylabel 'test2016.bleu_tok'
set grid
set key bottom right
set offsets graph 0.05, graph 0.05, graph 0.05, graph 0.05
set logscale x 2
set xtics ("0" 1, "1" 2, "2" 3, "4" 5, "16" 17, "64" 65, "256" 257)
set ytics nomirror
set y2tics
set y2label 'Shaw et al. EN-DE newstest2013 (right axis)'
plot 'results/converged_table2_standard_rule/plots/metric_vs_row.dat' using ($1+1):2:3 with yerrorlines title 'relpos (mean ± sd over seeds)', 'results/converged_table2_standard_rule/plots/metric_vs_row.paper.dat' using ($1+1):2 with linespoints axes x1y2 title 'Shaw et al. EN-DE newstest2013', 'results/converged_table2_standard_rule/plots/metric_vs_row.compare.dat' using ($1+1):2:3 with yerrorlines dt 2 title 'relpos at running_best (the committed table) (mean ± sd)'
