set terminal pngcairo size 900,700 noenhanced
set output 'results/table2_clip_k/plots/learning_curves.png'
set title 'Table 2: clipping distance k' font ',10'
set xlabel 'step'
set ylabel 'validation loss (nats/token), mean over seeds'
set key below
set grid
plot 'results/table2_clip_k/plots/curve_0.dat' using 1:2 with linespoints title 'k=0 (n=3)', 'results/table2_clip_k/plots/curve_1.dat' using 1:2 with linespoints title 'k=1 (n=3)', 'results/table2_clip_k/plots/curve_2.dat' using 1:2 with linespoints title 'k=2 (n=3)', 'results/table2_clip_k/plots/curve_3.dat' using 1:2 with linespoints title 'k=4 (n=3)', 'results/table2_clip_k/plots/curve_4.dat' using 1:2 with linespoints title 'k=16 (n=3)', 'results/table2_clip_k/plots/curve_5.dat' using 1:2 with linespoints title 'k=64 (n=3)', 'results/table2_clip_k/plots/curve_6.dat' using 1:2 with linespoints title 'k=256 (n=3)'
