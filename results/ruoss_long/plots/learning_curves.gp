set terminal pngcairo size 900,900 noenhanced
set output 'results/ruoss_long/plots/learning_curves.png'
set multiplot layout 2,1 title 'Ruoss et al. protocol (encoder-only, train 1-40, test 41-200), 40,000-update budget: per-token and exact-match accuracy' . "\n" . 'mean over seeds, band = lowest to highest seed, dot = where a run stopped' font ',10'
set grid
set key top right
set xlabel 'update'
set ylabel 'training loss (label-smoothed)'
plot 'results/ruoss_long/plots/train_0.dat' using 1:3:4 with filledcurves fs transparent solid 0.15 noborder lc rgb '#0072B2' notitle, 'results/ruoss_long/plots/train_0.dat' using 1:2 with lines lw 2 lc rgb '#0072B2' notitle, 'results/ruoss_long/plots/train_1.dat' using 1:3:4 with filledcurves fs transparent solid 0.15 noborder lc rgb '#D55E00' notitle, 'results/ruoss_long/plots/train_1.dat' using 1:2 with lines lw 2 lc rgb '#D55E00' notitle
set ylabel 'validation loss (nats/token)'
set key top right
plot 'results/ruoss_long/plots/curve_0.dat' using 1:3:4 with filledcurves fs transparent solid 0.15 noborder lc rgb '#0072B2' notitle, 'results/ruoss_long/plots/curve_0.dat' using 1:2 with lines lw 2 lc rgb '#0072B2' title 'position=reverse · {type: rope, randomized: 1024, randomized_eval: sample_by_length} / lr=0.25 (n=1)', 'results/ruoss_long/plots/stops_0.dat' using 1:2 with points pt 7 ps 0.9 lc rgb '#0072B2' notitle, 'results/ruoss_long/plots/curve_1.dat' using 1:3:4 with filledcurves fs transparent solid 0.15 noborder lc rgb '#D55E00' notitle, 'results/ruoss_long/plots/curve_1.dat' using 1:2 with lines lw 2 lc rgb '#D55E00' title 'position=reverse · {type: sinusoidal} / lr=0.25 (n=5)', 'results/ruoss_long/plots/stops_1.dat' using 1:2 with points pt 7 ps 0.9 lc rgb '#D55E00' notitle
unset multiplot
