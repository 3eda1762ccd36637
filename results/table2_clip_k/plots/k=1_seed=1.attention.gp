set terminal pngcairo size 700,600 noenhanced
set output 'results/table2_clip_k/plots/k=1_seed=1.attention.png'
set title 'k=1_seed=1: last encoder layer'
set xlabel 'key position'
set ylabel 'query position'
set yrange [] reverse
set palette grey negative
plot 'results/table2_clip_k/runs/k=1_seed=1/attention.tsv' matrix with image notitle
