set terminal pngcairo size 900,900 noenhanced
set output 'results/converged_k0_vs_none/plots/learning_curves.png'
set multiplot layout 2,1 title 'Shaw k = 0 against no positions, at convergence' . "\n" . 'mean over seeds, band = lowest to highest seed, dot = where a run stopped' font ',10'
set grid
set key top right
set xlabel 'update'
set ylabel 'training loss (label-smoothed)'
plot 'results/converged_k0_vs_none/plots/train_0.dat' using 1:3:4 with filledcurves fs transparent solid 0.15 noborder lc rgb '#0072B2' notitle, 'results/converged_k0_vs_none/plots/train_0.dat' using 1:2 with lines lw 2 lc rgb '#0072B2' notitle, 'results/converged_k0_vs_none/plots/train_1.dat' using 1:3:4 with filledcurves fs transparent solid 0.15 noborder lc rgb '#D55E00' notitle, 'results/converged_k0_vs_none/plots/train_1.dat' using 1:2 with lines lw 2 lc rgb '#D55E00' notitle
set ylabel 'validation loss (nats/token)'
set key top right
plot 'results/converged_k0_vs_none/plots/curve_0.dat' using 1:3:4 with filledcurves fs transparent solid 0.15 noborder lc rgb '#0072B2' notitle, 'results/converged_k0_vs_none/plots/curve_0.dat' using 1:2 with lines lw 2 lc rgb '#0072B2' title 'position={type: none} (n=3)', 'results/converged_k0_vs_none/plots/stops_0.dat' using 1:2 with points pt 7 ps 0.9 lc rgb '#0072B2' notitle, 'results/converged_k0_vs_none/plots/curve_1.dat' using 1:3:4 with filledcurves fs transparent solid 0.15 noborder lc rgb '#D55E00' notitle, 'results/converged_k0_vs_none/plots/curve_1.dat' using 1:2 with lines lw 2 lc rgb '#D55E00' title 'position={type: shaw, k: 0} (n=3)', 'results/converged_k0_vs_none/plots/stops_1.dat' using 1:2 with points pt 7 ps 0.9 lc rgb '#D55E00' notitle
unset multiplot
