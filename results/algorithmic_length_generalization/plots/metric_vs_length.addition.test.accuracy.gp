set terminal pngcairo size 900,600 noenhanced
set output 'results/algorithmic_length_generalization/plots/metric_vs_length.addition.test.accuracy.png'
set title 'test.accuracy — addition'
set xlabel 'length'
set ylabel 'test.accuracy (mean ± sd over seeds)'
set grid
set key outside right
plot 'results/algorithmic_length_generalization/plots/metric_vs_length.addition.test.accuracy._type__none_.dat' using 1:3:4 with filledcurves fc rgb '#1f77b4' fs transparent solid 0.15 notitle, '' using 1:2 with linespoints lc rgb '#1f77b4' lw 2 pt 7 title '{type: none}', 'results/algorithmic_length_generalization/plots/metric_vs_length.addition.test.accuracy._type__sinusoidal_.dat' using 1:3:4 with filledcurves fc rgb '#d62728' fs transparent solid 0.15 notitle, '' using 1:2 with linespoints lc rgb '#d62728' lw 2 pt 7 title '{type: sinusoidal}', 'results/algorithmic_length_generalization/plots/metric_vs_length.addition.test.accuracy._type__learned__max_len__128_.dat' using 1:3:4 with filledcurves fc rgb '#2ca02c' fs transparent solid 0.15 notitle, '' using 1:2 with linespoints lc rgb '#2ca02c' lw 2 pt 7 title '{type: learned, max_len: 128}', 'results/algorithmic_length_generalization/plots/metric_vs_length.addition.test.accuracy._type__shaw__k__16_.dat' using 1:3:4 with filledcurves fc rgb '#ff7f0e' fs transparent solid 0.15 notitle, '' using 1:2 with linespoints lc rgb '#ff7f0e' lw 2 pt 7 title '{type: shaw, k: 16}'
