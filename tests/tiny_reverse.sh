# Sourced by the script tests that train tiny runs (campaign_start_stop.sh, campaign_three_stages.sh,
# replay_prefix.sh): `tiny_reverse_common DIR` prints the config lines they share, a run store and results
# directory under DIR and the reverse task's data and a 1-layer decoder-only model small enough to train
# hundreds of updates a second; each test adds its name, seed, threads, train, eval and sweep.
tiny_reverse_common() {
  cat <<EOF2
run_store: $1/runs
results_dir: $1/results
data:
  task: reverse
  valid_split: val
  test_splits: [test]
  synthetic: {n_symbols: 10, train_size: 300, valid_size: 40, test_size: 40, train_len: [2, 5], test_len: [6, 8]}
model: {family: decoder_only, d_model: 16, heads: 2, d_ff: 32, decoder_layers: 1, dropout: 0.1, attention_dropout: 0.1, norm: pre}
EOF2
}
