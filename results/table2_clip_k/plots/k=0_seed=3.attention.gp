set terminal pngcairo size 700,600 noenhanced
set output 'results/table2_clip_k/plots/k=0_seed=3.attention.png'
set title 'k=0_seed=3: last encoder layer'
set xlabel 'key position'
set ylabel 'query position'
set yrange [] reverse
set palette grey negative
plot 'results/table2_clip_k/runs/k=0_seed=3/attention.tsv' matrix with image notitle
