set terminal pngcairo size 900,700 noenhanced
set output 'results/table1_abs_vs_rel/plots/learning_curves.png'
set title 'Table 1: absolute vs relative position representations' font ',10'
set xlabel 'step'
set ylabel 'validation loss (nats/token), mean over seeds'
set key below
set grid
plot 'results/table1_abs_vs_rel/plots/curve_0.dat' using 1:2 with linespoints title 'position={type: none} (n=3)', 'results/table1_abs_vs_rel/plots/curve_1.dat' using 1:2 with linespoints title 'position={type: sinusoidal} (n=3)', 'results/table1_abs_vs_rel/plots/curve_2.dat' using 1:2 with linespoints title 'position={type: shaw, k: 16} (n=3)'
