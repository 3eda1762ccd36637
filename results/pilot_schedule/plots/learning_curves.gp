set terminal pngcairo size 900,1250 noenhanced
set output 'results/pilot_schedule/plots/learning_curves.png'
set multiplot layout 3,1 title 'Convergence pilot: schedules' . "\n" . 'mean over seeds, band = lowest to highest seed, dot = where a run stopped' font ',10'
set grid
set key top right
set xlabel 'update'
set ylabel 'training loss (label-smoothed)'
plot 'results/pilot_schedule/plots/train_0.dat' using 1:3:4 with filledcurves fs transparent solid 0.15 noborder lc rgb '#0072B2' notitle, 'results/pilot_schedule/plots/train_0.dat' using 1:2 with lines lw 2 lc rgb '#0072B2' notitle, 'results/pilot_schedule/plots/train_1.dat' using 1:3:4 with filledcurves fs transparent solid 0.15 noborder lc rgb '#D55E00' notitle, 'results/pilot_schedule/plots/train_1.dat' using 1:2 with lines lw 2 lc rgb '#D55E00' notitle
set ylabel 'validation loss (nats/token)'
set key top right
plot 'results/pilot_schedule/plots/curve_0.dat' using 1:3:4 with filledcurves fs transparent solid 0.15 noborder lc rgb '#0072B2' notitle, 'results/pilot_schedule/plots/curve_0.dat' using 1:2 with lines lw 2 lc rgb '#0072B2' title 'train={batch_tokens: 4096, lr: 0.42} (n=1)', 'results/pilot_schedule/plots/stops_0.dat' using 1:2 with points pt 7 ps 0.9 lc rgb '#0072B2' notitle, 'results/pilot_schedule/plots/curve_1.dat' using 1:3:4 with filledcurves fs transparent solid 0.15 noborder lc rgb '#D55E00' notitle, 'results/pilot_schedule/plots/curve_1.dat' using 1:2 with lines lw 2 lc rgb '#D55E00' title 'train={lr: 0.6} (n=1)', 'results/pilot_schedule/plots/stops_1.dat' using 1:2 with points pt 7 ps 0.9 lc rgb '#D55E00' notitle
set ylabel 'validation BLEU (greedy, tokenized)'
plot 'results/pilot_schedule/plots/bleu_0.dat' using 1:3:4 with filledcurves fs transparent solid 0.15 noborder lc rgb '#0072B2' notitle, 'results/pilot_schedule/plots/bleu_0.dat' using 1:2 with lines lw 2 lc rgb '#0072B2' notitle, 'results/pilot_schedule/plots/bleu_1.dat' using 1:3:4 with filledcurves fs transparent solid 0.15 noborder lc rgb '#D55E00' notitle, 'results/pilot_schedule/plots/bleu_1.dat' using 1:2 with lines lw 2 lc rgb '#D55E00' notitle
unset multiplot
