set terminal pngcairo size 700,600 noenhanced
set output 'results/table1_abs_vs_rel/plots/position=type-shaw-k-16_seed=1.attention.png'
set title 'position=type-shaw-k-16_seed=1: last encoder layer'
set xlabel 'key position'
set ylabel 'query position'
set autoscale xfix
set autoscale yfix
set yrange [] reverse
set palette grey negative
plot 'results/table1_abs_vs_rel/runs/position=type-shaw-k-16_seed=1/attention.tsv' matrix with image notitle
