set terminal pngcairo size 900,700 noenhanced
set output 'results/table3_ak_av/plots/learning_curves.png'
set title 'Table 3: a^K and a^V' font ',10'
set xlabel 'step'
set ylabel 'validation loss (nats/token), mean over seeds'
set key below
set grid
plot 'results/table3_ak_av/plots/curve_0.dat' using 1:2 with linespoints title 'position={type: shaw, k: 16, keys: true, values: true} (n=3)', 'results/table3_ak_av/plots/curve_1.dat' using 1:2 with linespoints title 'position={type: shaw, k: 16, keys: true, values: false} (n=3)', 'results/table3_ak_av/plots/curve_2.dat' using 1:2 with linespoints title 'position={type: shaw, k: 16, keys: false, values: true} (n=3)', 'results/table3_ak_av/plots/curve_3.dat' using 1:2 with linespoints title 'position={type: shaw, k: 16, keys: false, values: false} (n=3)'
