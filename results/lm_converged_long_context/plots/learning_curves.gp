set terminal pngcairo size 900,900 noenhanced
set output 'results/lm_converged_long_context/plots/learning_curves.png'
set multiplot layout 2,1 title 'Reference: the LM trained at 1,024 tokens (Brown), test perplexity by evaluation window' . "\n" . 'mean over seeds, band = lowest to highest seed, dot = where a run stopped' font ',10'
set grid
set key top right
set xlabel 'update'
set ylabel 'training loss (label-smoothed)'
plot 'results/lm_converged_long_context/plots/train_0.dat' using 1:3:4 with filledcurves fs transparent solid 0.15 noborder lc rgb '#0072B2' notitle, 'results/lm_converged_long_context/plots/train_0.dat' using 1:2 with lines lw 2 lc rgb '#0072B2' notitle, 'results/lm_converged_long_context/plots/train_1.dat' using 1:3:4 with filledcurves fs transparent solid 0.15 noborder lc rgb '#D55E00' notitle, 'results/lm_converged_long_context/plots/train_1.dat' using 1:2 with lines lw 2 lc rgb '#D55E00' notitle
set ylabel 'validation loss (nats/token)'
set key top right
plot 'results/lm_converged_long_context/plots/curve_0.dat' using 1:3:4 with filledcurves fs transparent solid 0.15 noborder lc rgb '#0072B2' notitle, 'results/lm_converged_long_context/plots/curve_0.dat' using 1:2 with lines lw 2 lc rgb '#0072B2' title 'position={type: rope} (n=1)', 'results/lm_converged_long_context/plots/stops_0.dat' using 1:2 with points pt 7 ps 0.9 lc rgb '#0072B2' notitle, 'results/lm_converged_long_context/plots/curve_1.dat' using 1:3:4 with filledcurves fs transparent solid 0.15 noborder lc rgb '#D55E00' notitle, 'results/lm_converged_long_context/plots/curve_1.dat' using 1:2 with lines lw 2 lc rgb '#D55E00' title 'position={type: alibi} (n=1)', 'results/lm_converged_long_context/plots/stops_1.dat' using 1:2 with points pt 7 ps 0.9 lc rgb '#D55E00' notitle
unset multiplot
