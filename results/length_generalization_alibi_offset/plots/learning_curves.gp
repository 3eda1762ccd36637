set terminal pngcairo size 900,900 noenhanced
set output 'results/length_generalization_alibi_offset/plots/learning_curves.png'
set multiplot layout 2,1 title 'Length generalization (local_sum): sequence and per-position accuracy %, val = train lengths 5-20, test = 21-40, ALiBi with direction' . "\n" . 'mean over seeds, band = lowest to highest seed, dot = where a run stopped' font ',10'
set grid
set key top right
set xlabel 'update'
set ylabel 'training loss (label-smoothed)'
plot 'results/length_generalization_alibi_offset/plots/train_0.dat' using 1:3:4 with filledcurves fs transparent solid 0.15 noborder lc rgb '#0072B2' notitle, 'results/length_generalization_alibi_offset/plots/train_0.dat' using 1:2 with lines lw 2 lc rgb '#0072B2' notitle
set ylabel 'validation loss (nats/token)'
set key top right
plot 'results/length_generalization_alibi_offset/plots/curve_0.dat' using 1:3:4 with filledcurves fs transparent solid 0.15 noborder lc rgb '#0072B2' notitle, 'results/length_generalization_alibi_offset/plots/curve_0.dat' using 1:2 with lines lw 2 lc rgb '#0072B2' title 'position={type: alibi, bidirectional: offset} (n=3)', 'results/length_generalization_alibi_offset/plots/stops_0.dat' using 1:2 with points pt 7 ps 0.9 lc rgb '#0072B2' notitle
unset multiplot
