set terminal pngcairo size 700,600 noenhanced
set output 'results/length_generalization_alibi_offset/plots/position=type-alibi-bidirectional-offset_seed=3.attention.png'
set title 'position=type-alibi-bidirectional-offset_seed=3: last encoder layer'
set xlabel 'key position'
set ylabel 'query position'
set autoscale xfix
set autoscale yfix
set yrange [] reverse
set palette grey negative
plot 'results/length_generalization_alibi_offset/runs/position=type-alibi-bidirectional-offset_seed=3/attention.tsv' matrix with image notitle
