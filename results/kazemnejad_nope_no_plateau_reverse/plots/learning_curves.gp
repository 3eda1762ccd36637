set terminal pngcairo size 900,900 noenhanced
set output 'results/kazemnejad_nope_no_plateau_reverse/plots/learning_curves.png'
set multiplot layout 2,1 title 'Kazemnejad et al. protocol, NoPE on reverse without the plateau stop: a sensitivity run' . "\n" . 'mean over seeds, band = lowest to highest seed, dot = where a run stopped' font ',10'
set grid
set key top right
set xlabel 'update'
set ylabel 'training loss (label-smoothed)'
plot 'results/kazemnejad_nope_no_plateau_reverse/plots/train_0.dat' using 1:3:4 with filledcurves fs transparent solid 0.15 noborder lc rgb '#0072B2' notitle, 'results/kazemnejad_nope_no_plateau_reverse/plots/train_0.dat' using 1:2 with lines lw 2 lc rgb '#0072B2' notitle
set ylabel 'validation loss (nats/token)'
set key top right
plot 'results/kazemnejad_nope_no_plateau_reverse/plots/curve_0.dat' using 1:3:4 with filledcurves fs transparent solid 0.15 noborder lc rgb '#0072B2' notitle, 'results/kazemnejad_nope_no_plateau_reverse/plots/curve_0.dat' using 1:2 with lines lw 2 lc rgb '#0072B2' title 'all runs (n=1)', 'results/kazemnejad_nope_no_plateau_reverse/plots/stops_0.dat' using 1:2 with points pt 7 ps 0.9 lc rgb '#0072B2' notitle
unset multiplot
