set terminal pngcairo size 900,700 noenhanced
set output 'results/length_generalization/plots/learning_curves.png'
set title 'Length generalization (local_sum): sequence and per-position accuracy %, val = train lengths 5-20, test = 21-40' font ',10'
set xlabel 'step'
set ylabel 'validation loss (nats/token), mean over seeds'
set key below
set grid
plot 'results/length_generalization/plots/curve_0.dat' using 1:2 with linespoints title 'position={type: none} (n=3)', 'results/length_generalization/plots/curve_1.dat' using 1:2 with linespoints title 'position={type: sinusoidal} (n=3)', 'results/length_generalization/plots/curve_2.dat' using 1:2 with linespoints title 'position={type: learned, max_len: 64} (n=3)', 'results/length_generalization/plots/curve_3.dat' using 1:2 with linespoints title 'position={type: shaw, k: 1} (n=3)', 'results/length_generalization/plots/curve_4.dat' using 1:2 with linespoints title 'position={type: shaw, k: 4} (n=3)', 'results/length_generalization/plots/curve_5.dat' using 1:2 with linespoints title 'position={type: shaw, k: 16} (n=3)', 'results/length_generalization/plots/curve_6.dat' using 1:2 with linespoints title 'position={type: rope} (n=3)', 'results/length_generalization/plots/curve_7.dat' using 1:2 with linespoints title 'position={type: alibi} (n=3)', 'results/length_generalization/plots/curve_8.dat' using 1:2 with linespoints title 'position={type: t5} (n=3)'
