set terminal pngcairo size 1000,720 noenhanced
set output 'results/algorithmic_encoder_only_alibi_offset/plots/metric_vs_length.odds_first.test.accuracy.png'
set title 'test.accuracy — odds_first (lengths below 11 from the other splits)'
set xlabel 'length'
set ylabel 'accuracy (mean ± sd over seeds)'
set yrange [-2:102]
set arrow from 10.5, graph 0 to 10.5, graph 1 nohead dt 2 lc rgb '#555555'
set label 'test ->' at 10.5, graph 0.97 offset 0.5, 0 font ',9'
set grid
set key below font ',9' maxrows 5
plot 'results/algorithmic_encoder_only_alibi_offset/plots/metric_vs_length.odds_first.test.accuracy._type__alibi__bidirectional__offset_.dat' using 1:3:4 with filledcurves fc rgb '#1f77b4' fs transparent solid 0.12 notitle, '' using 1:2 with linespoints lc rgb '#1f77b4' lw 2 pt 7 ps 0.7 title '{type: alibi, bidirectional: offset}', 'results/algorithmic_encoder_only_alibi_offset/plots/metric_vs_length.odds_first.test.accuracy._type__alibi__bidirectional__offset__randomized__256__randomized_eval__sample_.dat' using 1:3:4 with filledcurves fc rgb '#d62728' fs transparent solid 0.12 notitle, '' using 1:2 with linespoints lc rgb '#d62728' lw 2 pt 7 ps 0.7 title '{type: alibi, bidirectional: offset, randomized: 256, randomized_eval: sample}'
