set terminal pngcairo size 900,1250 noenhanced
set output 'results/pilot_convergence/plots/learning_curves.png'
set multiplot layout 3,1 title 'Convergence pilot: 45 epochs' . "\n" . 'mean over seeds, band = lowest to highest seed, dot = where a run stopped' font ',10'
set grid
set key top right
set xlabel 'update'
set ylabel 'training loss (label-smoothed)'
plot 'results/pilot_convergence/plots/train_0.dat' using 1:3:4 with filledcurves fs transparent solid 0.15 noborder lc rgb '#0072B2' notitle, 'results/pilot_convergence/plots/train_0.dat' using 1:2 with lines lw 2 lc rgb '#0072B2' notitle, 'results/pilot_convergence/plots/train_1.dat' using 1:3:4 with filledcurves fs transparent solid 0.15 noborder lc rgb '#D55E00' notitle, 'results/pilot_convergence/plots/train_1.dat' using 1:2 with lines lw 2 lc rgb '#D55E00' notitle
set ylabel 'validation loss (nats/token)'
set key top right
plot 'results/pilot_convergence/plots/curve_0.dat' using 1:3:4 with filledcurves fs transparent solid 0.15 noborder lc rgb '#0072B2' notitle, 'results/pilot_convergence/plots/curve_0.dat' using 1:2 with lines lw 2 lc rgb '#0072B2' title 'position={type: sinusoidal} (n=1)', 'results/pilot_convergence/plots/stops_0.dat' using 1:2 with points pt 7 ps 0.9 lc rgb '#0072B2' notitle, 'results/pilot_convergence/plots/curve_1.dat' using 1:3:4 with filledcurves fs transparent solid 0.15 noborder lc rgb '#D55E00' notitle, 'results/pilot_convergence/plots/curve_1.dat' using 1:2 with lines lw 2 lc rgb '#D55E00' title 'position={type: shaw, k: 16} (n=1)', 'results/pilot_convergence/plots/stops_1.dat' using 1:2 with points pt 7 ps 0.9 lc rgb '#D55E00' notitle
set ylabel 'validation BLEU (greedy, tokenized)'
plot 'results/pilot_convergence/plots/bleu_0.dat' using 1:3:4 with filledcurves fs transparent solid 0.15 noborder lc rgb '#0072B2' notitle, 'results/pilot_convergence/plots/bleu_0.dat' using 1:2 with lines lw 2 lc rgb '#0072B2' notitle, 'results/pilot_convergence/plots/bleu_1.dat' using 1:3:4 with filledcurves fs transparent solid 0.15 noborder lc rgb '#D55E00' notitle, 'results/pilot_convergence/plots/bleu_1.dat' using 1:2 with lines lw 2 lc rgb '#D55E00' notitle
unset multiplot
